import type { EventStore } from '../../src/eventstore/eventStore.js';
import { countProviderRecords } from '../../queries/deletions/countProviderRecords.js';
import { rawNamespace } from '../../src/rawstore/rawNamespaces.js';
import { deterministicId } from '../../src/shared/ids.js';
import { loadState } from '../shared/commandHandler.js';
import { deletionState, deletionStream, isFinished, type DeletionFinished, type DeletionRecordsCounted, type DeletionRequested } from './deletionJob.js';
import { DATA_ERASED, PROVIDER_DATA_ERASED } from '../../src/catalog/eventTypes.js';
import type { DataErased, ProviderDataErased } from './erasureEvents.js';
import { deleteRawObjects, destroyKeys, eraseDeliveries, eraseUploads, nowOf, purgeStores, queuedUploads, step, type ErasureDeps } from './erasureSteps.js';
import { loadProviderData, providerDataStream, type ProviderErasureFinished, type ProviderErasureRequested } from './providerData.js';

type Request = DeletionRequested['data'] & { provider: string; generation: number };

/**
 * Carries a provider-data erasure job to its end (spec "Provider erasure" and the erasure
 * paragraph of "Credentials and users"). Every step can run again after a crash or a failed
 * attempt: events get ids derived from the job, and each step checks what it leaves behind.
 *
 * 1. The provider's ledger is closed to new data (the request did it; done here if a crash cut
 *    the request short).
 * 2. Every upload of the provider is erased: its stream and its ETL job's record events are
 *    tombstoned, so an ETL run still going has its next append refused.
 * 3. Once the read models have applied everything before, the records are counted.
 * 4. The data keys of every generation so far are destroyed: whatever copy of an event or raw
 *    payload survives anywhere cannot be opened again.
 * 5. `provider_data.erased` makes every projection drop the user's rows of that provider, and
 *    the webhook deliveries that describe the erased data (`data.written`, `sync.failed` of the
 *    provider) are deleted once the webhook engine has read that far.
 * 6. The read models and the event store are purged physically; the raw payloads are deleted.
 * 7. The ledger moves to the next generation (new data is accepted again), and the job ends
 *    with `data.erased` carrying `records_deleted`.
 */
export async function eraseProviderData(deps: ErasureDeps, jobId: string): Promise<void> {
  const jobStream = deletionStream(jobId);
  let job = await loadState(deps.eventStore, jobStream, deletionState);
  if (isFinished(job.state)) return;
  const request = job.state.request as Request;
  const { user_id: userId, tenant_id: tenantId, provider } = request;
  const ledgerStream = providerDataStream(userId, provider);

  step(deps, 'closing the provider ledger');
  let ledger = await loadProviderData(deps.eventStore, userId, provider);
  if (ledger.closed) {
    // The user was deleted meanwhile: that deletion erased this provider's data with the rest.
    await finish(deps.eventStore, job.revision!, request, { records: job.state.recordsCounted ?? 0, announce: false }, nowOf(deps));
    return;
  }
  const finished = ledger.finishedJobs[jobId];
  if (!finished) {
    if (ledger.erasingJob !== jobId) {
      if (ledger.erasingJob || ledger.generation !== request.generation) {
        await finish(deps.eventStore, job.revision!, request, { error: 'superseded by another erasure of the same provider' }, nowOf(deps));
        return;
      }
      const closing: ProviderErasureRequested = {
        type: 'provider_data.erasure_requested',
        data: { user_id: userId, tenant_id: tenantId, provider, generation: request.generation, job_id: jobId, requested_at: request.requested_at },
      };
      await deps.eventStore.appendToStream(ledgerStream, [{ ...closing, id: deterministicId(jobId, 'ledger-requested') }], { expectedRevision: ledger.revision ?? 'no_stream' });
      ledger = await loadProviderData(deps.eventStore, userId, provider);
    }

    step(deps, 'waiting for pulls of the provider');
    for (const h of deps.hooks ?? []) await h.quiesceProvider?.(userId, provider, deps.signal ?? new AbortController().signal);

    step(deps, 'erasing uploads');
    const uploads = [...ledger.uploads, ...(await queuedUploads(deps.readStore, userId, provider)).map((j) => j._id)];
    const rawObjects = await eraseUploads(deps, userId, uploads);

    if (job.state.recordsCounted === null) {
      step(deps, 'counting records');
      await deps.settle();
      const counted: DeletionRecordsCounted = {
        type: 'deletion.records_counted',
        data: { job_id: jobId, user_id: userId, provider, records: await countProviderRecords(deps.readStore, userId, provider) },
      };
      await deps.eventStore.appendToStream(jobStream, [{ ...counted, id: deterministicId(jobId, 'counted') }], { expectedRevision: job.revision! });
      job = await loadState(deps.eventStore, jobStream, deletionState);
    }

    step(deps, 'destroying data keys');
    await destroyKeys(deps, userId, provider, ledger.generation);

    step(deps, 'dropping read-model rows');
    let dropPosition: number | undefined;
    if (!job.state.dropped) {
      const drop: ProviderDataErased = { type: PROVIDER_DATA_ERASED, data: { user_id: userId, tenant_id: tenantId, provider, job_id: jobId, erased_at: nowOf(deps).toISOString() } };
      const r = await deps.eventStore.appendToStream(jobStream, [{ ...drop, id: deterministicId(jobId, 'dropped') }], { expectedRevision: job.revision! });
      dropPosition = r.lastPosition;
      job = await loadState(deps.eventStore, jobStream, deletionState);
    }
    for (const h of deps.hooks ?? []) await h.eraseProvider?.({ userId, tenantId, provider }, deps.signal ?? new AbortController().signal);
    await deps.settle(dropPosition);

    step(deps, 'erasing webhook deliveries');
    await eraseDeliveries(deps, dropPosition ?? (await deps.eventStore.headPosition()), userId, provider);

    step(deps, 'deleting raw payloads');
    const namespaces = Array.from({ length: ledger.generation + 1 }, (_, g) => rawNamespace(userId, provider, g));
    await deleteRawObjects(deps.rawStore, rawObjects, namespaces);

    step(deps, 'purging stores');
    await purgeStores(deps);

    step(deps, 'reopening the provider ledger');
    const reopened: ProviderErasureFinished = {
      type: 'provider_data.erasure_finished',
      data: { user_id: userId, tenant_id: tenantId, provider, generation: ledger.generation, job_id: jobId, status: 'done', finished_at: nowOf(deps).toISOString() },
    };
    await deps.eventStore.appendToStream(ledgerStream, [{ ...reopened, id: deterministicId(jobId, 'ledger-finished') }], { expectedRevision: ledger.revision! });
  }

  step(deps, 'finishing');
  job = await loadState(deps.eventStore, jobStream, deletionState);
  await finish(deps.eventStore, job.revision!, request, { records: job.state.recordsCounted ?? 0, announce: true }, nowOf(deps));
}

/**
 * Ends the job: `data.erased` with the count (when the job erased something itself) and
 * `deletion.finished`, in one append at the revision read, so a late second finisher fails.
 */
async function finish(
  eventStore: EventStore,
  revision: number,
  r: Request,
  outcome: { records: number; announce: boolean } | { error: string },
  now: Date,
): Promise<void> {
  const at = now.toISOString();
  const failed = 'error' in outcome;
  const done: DeletionFinished = {
    type: 'deletion.finished',
    data: { job_id: r.job_id, tenant_id: r.tenant_id, user_id: r.user_id, status: failed ? 'failed' : 'done', finished_at: at, error: failed ? outcome.error : null },
  };
  const events: ((DataErased | DeletionFinished) & { id: string })[] = [];
  if (!failed && outcome.announce) {
    const erased: DataErased = {
      type: DATA_ERASED,
      data: { user_id: r.user_id, tenant_id: r.tenant_id, external_ref: r.external_ref, provider: r.provider, job_id: r.job_id, records_deleted: outcome.records, erased_at: at },
    };
    events.push({ ...erased, id: deterministicId(r.job_id, 'data-erased') });
  }
  events.push({ ...done, id: deterministicId(r.job_id, 'finished') });
  await eventStore.appendToStream(deletionStream(r.job_id), events, { expectedRevision: revision });
}
