import { createHash } from 'node:crypto';
import { loadProviderDataHead } from '../../../commands/deletions/providerData.js';
import { refusalOf } from '../../../commands/deletions/registerDataWrite.js';
import { acceptUpload, findUpload, type AcceptUploadOutcome } from '../../../commands/ingestion/acceptUpload.js';
import { inlineKey, type EtlTier, type UploadAccepted } from '../../../commands/ingestion/upload.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { userState, userStream } from '../../../commands/users/user.js';
import { DataKeyDestroyedError, type DataKeys } from '../../crypto/dataKeys.js';
import { sealBytes } from '../../crypto/payloadCipher.js';
import { chunkSealer, sealChunked } from '../../crypto/chunkedSealing.js';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { EventStore } from '../../eventstore/eventStore.js';
import { INLINE_PAYLOAD_MAX_BYTES } from '../../rawstore/inlinePayload.js';
import { rawNamespace } from '../../rawstore/rawNamespaces.js';
import type { RawStore } from '../../rawstore/rawStore.js';
import { sha256Hex } from '../../shared/secrets.js';

export type PayloadStores = { eventStore: EventStore; rawStore: RawStore; dataKeys: DataKeys };

export type ProviderPayload = {
  tenantId: string;
  userId: string;
  /** Device or provider slug: names the parser and the user's data ledger of that provider. */
  provider: string;
  /** Names the payload within the provider's data of the user (an Upload-Id, or `pulledPayloadId`). */
  payloadId: string;
  /** The payload: in memory, or staged on disk (a resumable upload), read once as it is sealed into the raw store. */
  body: Buffer | StagedBody;
  /** Sealed in chunks, to be read by range (imports, contracts §13); device payloads are sealed whole. */
  chunked?: boolean;
  contentType: string;
  tier: EtlTier;
  /** A pulled or pushed payload's data type (ParseContext.dataType); absent for device uploads. */
  dataType?: string | null;
  /** The IANA zone the uploader named (contracts §17), checked and canonical; carried on the acceptance to the decoder. */
  timeZone?: string | null;
  /** Who stored it: the user token's id for an upload, `sync-run:<id>` for a pull, `push:<provider>` for a push. */
  actor: string;
  at?: Date;
};

/** A payload too large to hold in memory: its size and digest, and a way to read it. */
export type StagedBody = { bytes: number; sha256: string; open: () => Readable };

export type StoredPayload = {
  /** The same payload id was accepted before with the same body: nothing was stored again. */
  replayed: boolean;
  accepted: UploadAccepted['data'];
  /** Global position of the acceptance (its ETL job's id); null for a replay answered before appending. */
  position: number | null;
};

/** The staged bytes through the sealer; a failing read fails the sealed stream too (pipeline destroys it). */
function sealedStream(source: Readable, sealer: Transform): Transform {
  pipeline(source, sealer).catch(() => {});
  return sealer;
}

/**
 * Names a pulled payload by its run, what it answers and its body: a retried run (a crash, a
 * time-out) that pulls the same page again finds it stored and stores nothing twice.
 */
export function pulledPayloadId(runId: number | string, ref: string, body: Buffer): string {
  const digest = createHash('sha256').update(body).digest('hex');
  return `sync.${runId}.${sha256Hex(`${ref}\u0000${digest}`).slice(0, 40)}`;
}

/**
 * Stores one payload from a device upload, a pull or a push the one way every path shares:
 * refused while the provider's data is erased or the user deleted; sealed with the data key of
 * the current generation (docs/erasure.md) and kept unchanged in the raw store; registered with
 * the user's data of the provider and accepted by an event that queues its ETL job, both in one
 * append (acceptUpload). The same payload id with the same body replays; with another body it is refused (422).
 * Callers settle `etl_jobs` and kick the ETL worker when `replayed` is false.
 */
export async function storeProviderPayload(stores: PayloadStores, p: ProviderPayload): Promise<StoredPayload> {
  const { eventStore, rawStore, dataKeys } = stores;
  const staged = Buffer.isBuffer(p.body) ? null : p.body;
  const sha256 = staged ? staged.sha256 : createHash('sha256').update(p.body as Buffer).digest('hex');
  const bytes = staged ? staged.bytes : (p.body as Buffer).length;
  // Spec "Provider erasure": while the provider's data is being erased, nothing is kept.
  const head = await loadProviderDataHead(eventStore, p.userId, p.provider);
  const refusal = refusalOf(head);
  if (refusal) throw refusal;
  const generation = head.generation;
  const upload = await findUpload(eventStore, p.userId, p.provider, p.payloadId, generation);
  const previous = upload.state.accepted;
  if (previous) {
    if (previous.sha256 !== sha256) throw new DomainError('unprocessable', 'Upload-Id was already used with a different body');
    return { replayed: true, accepted: previous, position: null };
  }

  // Sealed with the data key of this generation: once the data is erased, a copy of the payload
  // left anywhere opens no more. A small body goes into its acceptance event (inlinePayload.ts),
  // and so does a key issued for it: key, payload and acceptance are one durable write.
  const ref = { userId: p.userId, provider: p.provider, generation };
  const inlined = !staged && !p.chunked && bytes <= INLINE_PAYLOAD_MAX_BYTES;
  const erasedMeanwhile = async (err: unknown): Promise<never> => {
    // Erased since the ledger was read: the user deleted (410) or the provider's data (409).
    if (err instanceof DataKeyDestroyedError) throw refusalOf(await loadProviderDataHead(eventStore, p.userId, p.provider), generation) ?? err;
    throw err;
  };
  const at = (p.at ?? new Date()).toISOString();
  const acceptance = (stored: { key: string }, inline: Buffer | null) => ({
    tenantId: p.tenantId,
    userId: p.userId,
    actor: p.actor,
    provider: p.provider,
    uploadId: p.payloadId,
    objectKey: stored.key,
    ...(inline ? { inlinePayload: inline.toString('base64') } : {}),
    // The payload's own digest and size, as sent (replays compare them), not the sealed object's.
    sha256,
    bytes,
    contentType: p.contentType,
    generation,
    tier: p.tier,
    dataType: p.dataType ?? undefined,
    timeZone: p.timeZone ?? undefined,
    at,
  });
  if (inlined) {
    const dataKey = await dataKeys.prepare(ref, p.tenantId).catch(erasedMeanwhile);
    const stored = { key: inlineKey(sha256) };
    const sealed = (key: { keyId: string; key: Buffer }) => acceptance(stored, sealBytes(key.key, p.body as Buffer, key.keyId));
    let result: AcceptUploadOutcome & { position: number };
    try {
      result = await acceptUpload(eventStore, sealed(dataKey), { head, upload }, undefined, dataKey.unstored ? [dataKey.unstored] : []);
      // A replay appended nothing, the key neither.
      if (dataKey.unstored && !result.replayed) dataKeys.stored(dataKey.keyId, dataKey.key);
    } catch (err) {
      const lost = dataKey.unstored ? dataKeys.lostIssue(dataKey.keyId, err) : null;
      if (lost === 'destroyed') return erasedMeanwhile(new DataKeyDestroyedError(dataKey.keyId));
      if (lost !== 'taken') throw err;
      // Another writer issued the key first: sealed again with theirs, the streams read again.
      const winner = await dataKeys.issue(ref, p.tenantId).catch(erasedMeanwhile);
      result = await acceptUpload(eventStore, sealed(winner));
    }
    return { replayed: result.replayed, accepted: result.accepted, position: result.replayed ? null : result.position };
  }
  const dataKey = await dataKeys.issue(ref, p.tenantId).catch(erasedMeanwhile);
  const namespace = rawNamespace(p.userId, p.provider, generation);
  const put = staged
    ? rawStore.putStream(sealedStream(staged.open(), chunkSealer(dataKey.key, dataKey.keyId)), namespace, { sha256 })
    : rawStore.put(p.chunked ? sealChunked(dataKey.key, dataKey.keyId, p.body as Buffer) : sealBytes(dataKey.key, p.body as Buffer, dataKey.keyId), namespace, { sha256 });
  const stored = await put.catch(async (err: unknown) => {
    // An erasure that began meanwhile sweeps the namespace, possibly under this very write:
    // for a user deletion that is the spec's 410.
    const user = (await loadState(eventStore, userStream(p.userId), userState)).state;
    if (user.status !== 'active') throw new DomainError('gone', 'the user is being deleted');
    const now = refusalOf(await loadProviderDataHead(eventStore, p.userId, p.provider), generation);
    if (now) throw now;
    throw err;
  });
  // Refused from here on: the payload just stored goes (the erasure may have swept it already).
  const result = await acceptUpload(eventStore, acceptance(stored, null), { head, upload }).catch(async (err: unknown) => {
    await rawStore.delete(stored.key);
    throw err;
  });
  // A racing writer with the same payload id was accepted first, with its own sealed copy.
  if (result.replayed && result.accepted.object_key !== stored.key) await rawStore.delete(stored.key);
  return { replayed: result.replayed, accepted: result.accepted, position: result.replayed ? null : result.position };
}
