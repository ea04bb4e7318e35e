import type { Logger } from 'pino';
import { decideFinishEtlJob, finishEtlJob, type EtlTally } from '../../../commands/ingestion/finishEtlJob.js';
import { ingestStream } from '../../../commands/ingestion/ingestedEvents.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { userState, userStream } from '../../../commands/users/user.js';
import type { DeviceParser } from '../../../commands/ingestion/records.js';
import { TIER_PRIORITY, uploadState, type EtlTier, type UploadEvent, type UploadState } from '../../../commands/ingestion/upload.js';
import type { ImportDecoder } from '../../sources/files/importSource.js';
import type { DataKeys } from '../../crypto/dataKeys.js';
import { ConcurrencyError, StreamDeletedError, type EventStore } from '../../eventstore/eventStore.js';
import { CoalescedAppends } from '../../eventstore/coalescedAppends.js';
import type { RawStore } from '../../rawstore/rawStore.js';
import type { NewJob } from '../../workqueue/workQueue.js';
import { SMALL_JOBS_PER_THREAD, type EtlRunner } from './etlPool.js';
import { BULK_UPLOAD_BYTES, runEtlTask } from './etlTask.js';
import { etlTallyOf, lastCheckpoint, tallyFrom } from './etlCheckpoint.js';
import { EtlAttemptStopped } from './etlLimits.js';
import { JobParked, JobRetry, type JobContext, type JobHandler } from '../jobs/jobHandler.js';
import { transientKind } from '../../shared/transientErrors.js';

/** The ETL's job kind on the work queue: small uploads and pulled payloads. */
export const ETL_JOB = 'etl';
/**
 * The bulk lane: uploads of BULK_UPLOAD_BYTES or more (exports, big imports) are jobs of their
 * own kind, so that they take at most their own slots and never every slot of the small lane
 * (issue 27: one user's big import must not hold other users' small uploads back).
 */
export const ETL_BULK_JOB = 'etl.bulk';
export const ETL_JOB_KINDS = [ETL_JOB, ETL_BULK_JOB] as const;

export type EtlJobOptions = {
  eventStore: EventStore;
  rawStore: RawStore;
  parsers: Readonly<Record<string, DeviceParser>>;
  /** The native export formats (contracts §13), for jobs run here without a pool. */
  importDecoders?: Readonly<Record<string, ImportDecoder>>;
  /** Seal what jobs run here (without a pool) write; a pool's threads open their own. */
  dataKeys: DataKeys;
  /**
   * Where claimed jobs run: the service gives an `EtlThreadPool`, so that normalisation never
   * blocks the thread that answers HTTP. Without one they run here, with the stores above.
   */
  pool?: EtlRunner;
  log?: Logger;
  /** Jobs run at once in this process. */
  concurrency?: number;
  leaseMs?: number;
};

/**
 * The queue job of an upload's ETL (one per upload stream while it is live): due at once,
 * uploads before pulled payloads before backfills, at most `MAX_ETL_ATTEMPTS` attempts (the
 * domain parks the job on its fifth failure, and the queue dead-letters it in the same step).
 * An upload of BULK_UPLOAD_BYTES or more goes to the bulk lane, one tier later than its own, and
 * holds the lock `etl-bulk:<user>`: one user's bulk jobs run one at a time, so several big
 * imports of one user never fill the bulk lane either. A job made again without the upload at
 * hand (a retry of a parked job, the sweep) reads it first (`etlJobOf`), so it keeps its lane.
 */
export function etlJob(stream: string, tier: EtlTier | null, upload?: { bytes: number; user_id: string; tenant_id?: string }): NewJob {
  const priority = tier === null ? 0 : TIER_PRIORITY[tier];
  // Claims take turns between tenants, then users (contracts §18, src/workqueue/fairLanes.ts).
  const lane = upload?.tenant_id ? { tenant: upload.tenant_id, user: upload.user_id } : {};
  if (!upload || !(upload.bytes >= BULK_UPLOAD_BYTES)) return { kind: ETL_JOB, key: stream, payload: { stream }, priority, ...lane };
  return { kind: ETL_BULK_JOB, key: stream, payload: { stream }, priority: priority + 1, lock: `etl-bulk:${upload.user_id}`, ...lane };
}

/**
 * The ETL job of an upload stream, its size read from the stream's `upload.accepted`: what a
 * retried parked job and the sweep enqueue, so that a bulk upload goes back to the bulk lane
 * (contracts §18: it never shares a thread with small jobs). Null once the stream was erased:
 * nothing is left to run.
 */
export async function etlJobOf(eventStore: EventStore, stream: string, tier: EtlTier | null): Promise<NewJob | null> {
  try {
    const { state } = await loadState(eventStore, stream, uploadState);
    return etlJob(stream, tier, state.accepted ?? undefined);
  } catch (err) {
    if (err instanceof StreamDeletedError) return null;
    throw err;
  }
}

/**
 * Runs ETL jobs from the work queue (issue 26). An attempt records `etl.job_started` on the upload
 * stream at the revision it read (the run's records and outcome are checked against it, so a run
 * overtaken by a later attempt stops appending), has the payload normalised on the pool's threads
 * and records the outcome at the revision its start left: `etl.job_succeeded` (and `data.written`),
 * `etl.job_discarded`, `etl.job_failed` (the queue retries at its `next_attempt_at`) or
 * `etl.job_parked` (the queue dead-letters the job). Leases, renewals and take-overs are the
 * queue's; the upload stream holds business facts only. A crash at any point leaves the job to be
 * taken again; the record events being deterministic, each record is stored once.
 */
export function etlJobHandler(options: EtlJobOptions): JobHandler & { close(): Promise<void> } {
  // The jobs of one claim start, and their runs end, in the same turns: their `etl.job_started`
  // and outcomes go as one multi-stream append a turn (coalescedAppends.ts, issue 37). The store
  // stays its owner's to close.
  const o = { ...options, eventStore: new CoalescedAppends(options.eventStore) };
  const runner = o.pool ?? { run: (task) => runEtlTask(o, task), close: async () => {} };
  return {
    kind: ETL_JOB,
    concurrency: o.concurrency ?? 1,
    leaseMs: o.leaseMs,
    run: (context) => runEtlAttempt(o, runner, context),
    close: () => runner.close(),
  };
}

/**
 * The two lanes of ETL jobs over one runner: the small lane with SMALL_JOBS_PER_THREAD jobs on
 * each of `threads` shared threads (each waits on reads and durable writes, so they interleave),
 * the bulk lane with `bulkThreads` jobs, each on a thread of its own (etlPool.ts): a big import
 * never shares a thread, its memory or its fate with small uploads (contracts §18).
 */
export function etlJobHandlers(o: EtlJobOptions & { threads: number; bulkThreads: number }): { handlers: JobHandler[]; close(): Promise<void> } {
  const small = etlJobHandler({ ...o, concurrency: o.threads * SMALL_JOBS_PER_THREAD });
  return { handlers: [small, { ...small, kind: ETL_BULK_JOB, concurrency: o.bulkThreads }], close: () => small.close() };
}

type Started = { state: UploadState; revision: number };

/**
 * What a stopped run is known to have stored: its last checkpoint's tallies. Records it stored
 * after that checkpoint stay stored (like those before the damage of an unreadable file) but are
 * not counted: only the ended thread knew them.
 */
async function checkpointTally(eventStore: EventStore, userId: string, stream: string): Promise<EtlTally> {
  return etlTallyOf(tallyFrom((await lastCheckpoint(eventStore, ingestStream(userId, stream)))?.data));
}

async function runEtlAttempt(o: EtlJobOptions, runner: EtlRunner, { job, lease, signal, renew }: JobContext): Promise<void> {
  const stream = (job.payload as { stream: string }).stream;
  const log = o.log?.child({ job: stream, attempt: job.attempts });
  let started: Started | null;
  try {
    started = await start(o.eventStore, stream, lease().holder, lease().expiresAt, job.attempts);
  } catch (err) {
    // The upload was erased (its user deleted, or its provider's data): nothing left to do.
    if (err instanceof StreamDeletedError) return;
    throw err;
  }
  if (!started) return;
  const { state, revision } = started;
  const upload = state.accepted!;
  // Renewed first: a runner that lost the job meanwhile records no outcome.
  const finish = async (outcome: Parameters<typeof finishEtlJob>[4]) => {
    await renew();
    return finishEtlJob(o.eventStore, stream, state, revision, outcome);
  };
  try {
    const user = (await loadState(o.eventStore, userStream(upload.user_id), userState)).state;
    if (user.status !== 'active') {
      await finish({ kind: 'discarded', reason: 'user deleted' });
      return;
    }
    const began = Date.now();
    const outcome = await runner.run({ jobStream: stream, upload, claimRevision: revision }).catch(async (err: unknown) => {
      if (!(err instanceof EtlAttemptStopped)) throw err;
      // Over its deadline or memory cap: the same file would cross it again, so no retry (contracts §18).
      log?.warn({ limit: err.limit }, 'etl job stopped by its bound');
      return { kind: 'unreadable' as const, error: err.message, ...(await checkpointTally(o.eventStore, upload.user_id, stream)) };
    });
    await finish(outcome);
    if (outcome.kind === 'succeeded' || outcome.kind === 'unreadable') log?.info({ records: outcome.records, rejected: outcome.rejected, unchanged: outcome.unchanged, unreadable: outcome.kind === 'unreadable', ms: Date.now() - began }, 'etl job done');
    else log?.info({ reason: outcome.reason }, 'etl job discarded');
  } catch (err) {
    if (signal.aborted) throw err;
    // Erased while it ran, or a later attempt appended on the upload stream: nothing to record here.
    if (err instanceof StreamDeletedError || (err instanceof DomainError && err.code === 'gone')) return log?.info('etl job was erased while it ran');
    if (err instanceof ConcurrencyError && err.streamName === stream) return log?.warn('etl job was overtaken by a later attempt; dropping this run');
    // A store failing for a while is not the upload's fault: no failure recorded, and the job
    // runner runs the attempt again once the store answers (contracts §19).
    if (transientKind(err)) throw err;
    const message = err instanceof Error ? err.message : String(err);
    log?.warn({ err: message }, 'etl job failed');
    const [recorded] = decideFinishEtlJob(state, { kind: 'failed', error: message }, new Date());
    await renew();
    await o.eventStore.appendToStream(stream, [recorded!], { expectedRevision: revision });
    if (recorded!.type === 'etl.job_parked') throw new JobParked(message);
    const retryAt = recorded!.type === 'etl.job_failed' ? Date.parse(recorded!.data.next_attempt_at) : null;
    throw new JobRetry(message, retryAt);
  }
}

/**
 * Records the attempt's start at the revision read. Answers null when the job has nothing left to
 * do (done, or erased). A parked job runs again only when an operator replayed its dead letter:
 * the replay is recorded as `etl.job_retried` before the start.
 */
async function start(eventStore: EventStore, stream: string, worker: string, leaseUntil: number, attempt: number): Promise<Started | null> {
  for (let round = 0; ; round++) {
    const { state, revision } = await loadState(eventStore, stream, uploadState);
    if (!state.accepted || revision === null || state.status === 'done') return null;
    const a = state.accepted;
    const now = new Date();
    const events: UploadEvent[] = [];
    if (state.status === 'parked') events.push({ type: 'etl.job_retried', data: { user_id: a.user_id, tenant_id: a.tenant_id, by: 'operator (job replay)', at: now.toISOString() } });
    events.push({
      type: 'etl.job_started',
      data: { user_id: a.user_id, tenant_id: a.tenant_id, attempt, worker, started_at: now.toISOString(), lease_until: new Date(leaseUntil).toISOString() },
    });
    try {
      const r = await eventStore.appendToStream(stream, events, { expectedRevision: revision });
      let next = state;
      for (const e of events) next = uploadState.evolve(next, e as never);
      return { state: next, revision: r.nextExpectedRevision };
    } catch (err) {
      if (!(err instanceof ConcurrencyError) || round >= 4) throw err;
    }
  }
}
