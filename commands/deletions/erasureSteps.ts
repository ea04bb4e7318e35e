import type { EtlJobDoc } from '../../projections/ingestion/etlJobsProjection.js';
import type { DataKeys } from '../../src/crypto/dataKeys.js';
import { StreamDeletedError, type EventStore } from '../../src/eventstore/eventStore.js';
import type { RawStore } from '../../src/rawstore/rawStore.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { ingestStream } from '../ingestion/ingestedEvents.js';
import { isInlineKey, uploadState } from '../ingestion/upload.js';
import { loadState } from '../shared/commandHandler.js';

/**
 * What other features keep per user and provider and erase with it. Connections (pull jobs, sync
 * log, push subscriptions, consent states, the disconnected connection) plug in here; uploads,
 * records, keys and raw payloads are erased by the jobs themselves.
 */
export type ErasureHook = {
  name: string;
  /** True while the user is connected to the provider: erasing it is then a 409 (spec "Credentials and users"). */
  isConnected?(tenantId: string, userId: string, provider: string): Promise<boolean>;
  /** Resolves once no pull of that provider for the user runs (spec "Provider erasure": a running pull delays the job). */
  quiesceProvider?(userId: string, provider: string, signal: AbortSignal): Promise<void>;
  eraseProvider?(job: { userId: string; tenantId: string; provider: string }, signal: AbortSignal): Promise<void>;
  eraseUser?(job: { userId: string; tenantId: string }, signal: AbortSignal): Promise<void>;
};

/**
 * Webhook deliveries (read models of the webhook engine, src/webhooks/deliveryErasure.ts): their
 * bodies name the user, the external_ref, record types and days. They go with what they describe.
 */
export type DeliveryErasure = {
  /**
   * Resolves once the engine has made the deliveries of every event up to `position`, so that
   * none about the erased data is made after they are deleted; or, when the engine lags too far,
   * after a bounded wait (it then says so in the log).
   */
  settle(position: number): Promise<void>;
  /** Every delivery naming the user, but the announcements of the user's deletion (kept until retention). */
  eraseUser(userId: string): Promise<void>;
  /** The deliveries naming the user that describe the provider's erased data: `data.written` and `sync.failed`. */
  eraseProvider(userId: string, provider: string): Promise<void>;
};

export type ErasureDeps = {
  eventStore: EventStore;
  readStore: ReadStore;
  rawStore: RawStore;
  dataKeys: DataKeys;
  /** Resolves once every projection has applied the log up to `position` (default: its head). */
  settle: (position?: number) => Promise<void>;
  hooks?: readonly ErasureHook[];
  deliveries?: DeliveryErasure;
  /** The work queue's jobs and dead letters, and the projections' dead letters, naming an erased user (contracts §19). */
  queuedWork?: QueuedWorkErasure;
  /** Aborted when the job ran out of time: the steps stop at the next check. */
  signal?: AbortSignal;
  now?: () => Date;
  /** Told each step as it starts, so that a job that ran out of time can say where. */
  onStep?: (step: string) => void;
};

export const nowOf = (deps: ErasureDeps) => (deps.now ?? (() => new Date()))();

export function step(deps: ErasureDeps, name: string): void {
  deps.signal?.throwIfAborted();
  deps.onStep?.(name);
}

/** Tombstones a stream: its events are gone and nothing can be appended to it again. Repeating it is harmless. */
export async function tombstone(eventStore: EventStore, stream: string): Promise<void> {
  try {
    await eventStore.deleteStream(stream, { hard: true });
  } catch (err) {
    if (!(err instanceof StreamDeletedError)) throw err;
  }
}

/**
 * The upload streams of a user (and provider): those its ledgers registered, and those the ETL
 * queue knows of (uploads accepted before ledgers existed).
 */
export async function queuedUploads(readStore: ReadStore, userId: string, provider?: string): Promise<EtlJobDoc[]> {
  return readStore.find<EtlJobDoc>('etl_jobs', { filter: provider ? { user_id: userId, provider } : { user_id: userId } });
}

/**
 * Erases uploads: each upload stream and its ETL job's record events are tombstoned, so an ETL
 * run still under way has its next append refused by the event store. Answers the raw objects
 * the uploads named, for deletion once the read models no longer need them.
 */
export async function eraseUploads(deps: ErasureDeps, userId: string, uploadStreams: Iterable<string>): Promise<string[]> {
  const objects: string[] = [];
  for (const stream of new Set(uploadStreams)) {
    deps.signal?.throwIfAborted();
    const upload = (await loadState(deps.eventStore, stream, uploadState)).state.accepted;
    // An inline payload has no object: it goes with the stream.
    if (upload && !isInlineKey(upload.object_key)) objects.push(upload.object_key);
    await tombstone(deps.eventStore, ingestStream(userId, stream));
    await tombstone(deps.eventStore, stream);
  }
  return objects;
}

export async function deleteRawObjects(rawStore: RawStore, keys: Iterable<string>, namespaces: Iterable<string>): Promise<void> {
  for (const key of new Set(keys)) await rawStore.delete(key);
  for (const ns of new Set(namespaces)) await rawStore.deleteNamespace(ns);
}

/** Every data key a provider's ledger used, up to and including `generation`. */
export async function destroyKeys(deps: ErasureDeps, userId: string, provider: string, generation: number): Promise<void> {
  for (let g = 0; g <= generation; g++) await deps.dataKeys.destroy({ userId, provider, generation: g });
  deps.dataKeys.forget(userId, provider);
}

/** Deliveries about the user (and provider) made up to `position` go: the engine is waited for first. */
export async function eraseDeliveries(deps: ErasureDeps, position: number, userId: string, provider?: string): Promise<void> {
  if (!deps.deliveries) return;
  await deps.deliveries.settle(position);
  deps.signal?.throwIfAborted();
  if (provider) await deps.deliveries.eraseProvider(userId, provider);
  else await deps.deliveries.eraseUser(userId);
}

/** Physically removes what was deleted, where the store can (SQLite: zeroed pages, WAL truncated; KurrentDB: a scavenge on every node). */
export async function purgeStores(deps: ErasureDeps): Promise<void> {
  await deps.readStore.purgeDeleted?.();
  await deps.eventStore.purgeDeleted?.();
}

/**
 * What is queued about a user beside the data (src/processes/jobs/queuedWorkErasure.ts): jobs in
 * any state (dead letters and reactors' set-aside events included) and the projections' dead letters.
 */
export type QueuedWorkErasure = {
  /** Removes all of it that names the user, but the queue job of the deletion `deletionJobId` carrying this out. */
  eraseUser(userId: string, deletionJobId: string, signal?: AbortSignal): Promise<void>;
};
