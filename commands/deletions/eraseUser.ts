import { ConcurrencyError, type EventStore } from '../../src/eventstore/eventStore.js';
import { snapshotStream } from '../shared/streamSnapshots.js';
import { PROVIDER_KINDS } from '../../src/catalog/providerKinds.js';
import { legacyRawNamespace, rawNamespace } from '../../src/rawstore/rawNamespaces.js';
import { deterministicId } from '../../src/shared/ids.js';
import { loadState } from '../shared/commandHandler.js';
import { externalRefState, externalRefStream } from '../users/externalRef.js';
import { userStream, type UserErased } from '../users/user.js';
import { userTokensStream } from '../users/userTokens.js';
import { profileKeyRef } from '../../src/crypto/personalSealing.js';
import { deletionState, deletionStream, isFinished, type DeletionFinished } from './deletionJob.js';
import { USER_DELETED, USER_ERASED } from '../../src/catalog/eventTypes.js';
import type { UserDeleted } from './erasureEvents.js';
import { deleteRawObjects, destroyKeys, eraseDeliveries, eraseUploads, nowOf, purgeStores, queuedUploads, step, tombstone, type ErasureDeps } from './erasureSteps.js';
import { loadProviderData, providerDataStream } from './providerData.js';

/**
 * Carries a user deletion job to its end (spec "States: User", deleting → removed; "Deletion
 * job": done means every raw file and row of the user is deleted). Every step can run again
 * after a crash or a failed attempt.
 *
 * 1. For each provider: every upload is erased (streams tombstoned, so an ETL run still going
 *    has its next append refused), every data key destroyed, and the provider's ledger tombstoned
 *    at the revision read, so an upload that got past the user check before the deletion began
 *    cannot register any more (and one that registered meanwhile is seen on the next round).
 * 2. `user.erased` makes every projection drop the user's rows (tokens included).
 * 3. The raw payloads are deleted; the external_ref is freed.
 * 4. `user.deleted` announces the end (its external_ref read, and sealed again, while the user's
 *    profile key still opens it). Once the webhook engine has read it, every delivery about the
 *    user but that announcement is deleted, then the profile key is destroyed: what personal data
 *    of the user any event still holds (external_ref, tag labels and notes, consent evidence,
 *    connection details) reads as nothing from then on, in every copy of the log.
 * 5. The user's token stream and own stream are tombstoned (after the announcement, so that an attempt failing
 *    before it is carried to its end by the next), the stores are purged physically and the job
 *    ends `done`. The job's stream stays: it is the
 *    job's record.
 */
export async function eraseUser(deps: ErasureDeps, jobId: string): Promise<void> {
  const jobStream = deletionStream(jobId);
  let job = await loadState(deps.eventStore, jobStream, deletionState);
  if (isFinished(job.state)) return;
  const request = job.state.request!;
  const { user_id: userId, tenant_id: tenantId } = request;
  const signal = deps.signal ?? new AbortController().signal;

  step(deps, 'erasing uploads and data keys');
  const rawObjects: string[] = [];
  const namespaces = [legacyRawNamespace(userId)];
  const providers = new Set([...Object.keys(PROVIDER_KINDS), ...(await queuedUploads(deps.readStore, userId)).map((j) => j.provider)]);
  for (const provider of providers) {
    for (let round = 0; ; round++) {
      deps.signal?.throwIfAborted();
      const ledger = await loadProviderData(deps.eventStore, userId, provider);
      if (ledger.closed) break;
      const uploads = [...ledger.uploads, ...(await queuedUploads(deps.readStore, userId, provider)).map((j) => j._id)];
      rawObjects.push(...(await eraseUploads(deps, userId, uploads)));
      await destroyKeys(deps, userId, provider, ledger.generation);
      for (let g = 0; g <= ledger.generation; g++) namespaces.push(rawNamespace(userId, provider, g));
      try {
        await deps.eventStore.deleteStream(providerDataStream(userId, provider), { hard: true, expectedRevision: ledger.revision ?? 'no_stream' });
        break;
      } catch (err) {
        // An upload registered since the ledger was read: erase it too, then close again.
        if (!(err instanceof ConcurrencyError) || round >= 10) throw err;
      }
    }
  }

  step(deps, 'dropping read-model rows');
  let dropPosition: number | undefined;
  if (!job.state.dropped) {
    const erased: UserErased = { type: USER_ERASED, data: { user_id: userId, tenant_id: tenantId, job_id: jobId, erased_at: nowOf(deps).toISOString() } };
    dropPosition = (await deps.eventStore.appendToStream(jobStream, [{ ...erased, id: deterministicId(jobId, 'erased') }], { expectedRevision: job.revision! })).lastPosition;
    job = await loadState(deps.eventStore, jobStream, deletionState);
  }
  for (const h of deps.hooks ?? []) await h.eraseUser?.({ userId, tenantId }, signal);
  await deps.settle(dropPosition);

  step(deps, 'deleting raw payloads');
  // Raw objects of erased uploads, every provider namespace and the namespace of payloads stored before ledgers existed.
  await deleteRawObjects(deps.rawStore, rawObjects, namespaces);

  step(deps, 'freeing the external_ref');
  if (request.external_ref !== null) await releaseExternalRef(deps.eventStore, tenantId, request.external_ref, userId);

  step(deps, 'announcing');
  // Sealed under the user's profile key like the request it repeats the external_ref of: the
  // webhook engine reads it before the key goes.
  if (!job.state.announced) {
    const deleted: UserDeleted = { type: USER_DELETED, data: { user_id: userId, tenant_id: tenantId, external_ref: request.external_ref, job_id: jobId, deleted_at: nowOf(deps).toISOString() } };
    await deps.eventStore.appendToStream(jobStream, [{ ...deleted, id: deterministicId(jobId, 'user-deleted') }], { expectedRevision: job.revision! });
  }

  step(deps, 'erasing webhook deliveries');
  await eraseDeliveries(deps, await deps.eventStore.headPosition(), userId);

  step(deps, 'destroying the profile key');
  await deps.dataKeys.destroy(profileKeyRef(userId));
  deps.dataKeys.forget(userId);

  // Last of the logical steps, after `user.deleted`: until then a retry of this job still finds
  // the user (deleting) and carries the job to its announcement (issue 26).
  step(deps, "erasing the user's stream");
  await tombstone(deps.eventStore, userTokensStream(userId));
  await tombstone(deps.eventStore, userStream(userId));
  await tombstone(deps.eventStore, snapshotStream(userStream(userId)));

  // Once the user's streams are tombstoned: nothing of the user is queued after this (contracts §19).
  step(deps, 'purging queued work');
  await deps.queuedWork?.eraseUser(userId, jobId, signal);

  step(deps, 'purging stores');
  await purgeStores(deps);

  step(deps, 'finishing');
  job = await loadState(deps.eventStore, jobStream, deletionState);
  const done: DeletionFinished = {
    type: 'deletion.finished',
    data: { job_id: jobId, tenant_id: tenantId, user_id: userId, status: 'done', finished_at: nowOf(deps).toISOString(), error: null },
  };
  await deps.eventStore.appendToStream(jobStream, [{ ...done, id: deterministicId(jobId, 'finished') }], { expectedRevision: job.revision! });
}

/** The claim goes with its events (the ref and the user id in them), so the ref can be claimed again. */
async function releaseExternalRef(eventStore: EventStore, tenantId: string, externalRef: string, userId: string): Promise<void> {
  const stream = externalRefStream(tenantId, externalRef);
  for (let attempt = 0; ; attempt++) {
    const ref = await loadState(eventStore, stream, externalRefState);
    if (ref.state.claimedBy !== userId || ref.revision === null) return;
    try {
      await eventStore.deleteStream(stream, { expectedRevision: ref.revision });
      return;
    } catch (err) {
      if (!(err instanceof ConcurrencyError) || attempt >= 5) throw err;
    }
  }
}
