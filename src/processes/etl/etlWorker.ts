import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { finishEtlJob } from '../../../commands/ingestion/finishEtlJob.js';
import { startEtlJob, type ClaimedJob } from '../../../commands/ingestion/startEtlJob.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { userState, userStream } from '../../../commands/users/user.js';
import type { DeviceParser } from '../../../commands/ingestion/records.js';
import type { ImportDecoder } from '../../sources/files/importSource.js';
import type { EtlJobDoc } from '../../../projections/ingestion/etlJobsProjection.js';
import type { DataKeys } from '../../crypto/dataKeys.js';
import { ConcurrencyError, StreamDeletedError, type EventStore } from '../../eventstore/eventStore.js';
import type { RawStore } from '../../rawstore/rawStore.js';
import type { ReadStore } from '../../readstore/readStore.js';
import type { EtlRunner } from './etlPool.js';
import { PollLoop } from '../../shared/pollLoop.js';
import { runEtlTask } from './etlTask.js';
import type { LeaseSettings } from '../../projector/leaseKeeper.js';
import type { Lease } from '../../readstore/leases.js';

export type EtlWorkerOptions = {
  eventStore: EventStore;
  readStore: ReadStore;
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
  pollMs?: number;
  leaseMs?: number;
  /** One process owns the embedded store: jobs found running at start-up were orphaned by a crash. */
  takeOverRunningAtStart?: boolean;
  /**
   * Several service processes: each job is also leased in the read store (`etl-job:<stream>`)
   * and the lease renewed while it runs, so a long job is never taken over while its worker is
   * alive, and a dead worker's job is taken over once its lease ran out (not the job's
   * `lease_until`). A worker whose lease was taken stops before its next append and records no
   * outcome.
   */
  leases?: LeaseSettings;
};

const jobLease = (stream: string) => `etl-job:${stream}`;

/**
 * Takes due jobs from the ETL queue (the etl_jobs read model), claims each with an append on its
 * upload stream, has the payload normalised (on the pool's threads) and records the outcome. A
 * crash at any point leaves the job pending or running; it is picked up again and, the record
 * events being deterministic, finishes with every record stored exactly once.
 */
export class EtlWorker {
  private readonly id = `etl-${randomUUID()}`;
  private readonly running = new Map<string, Promise<void>>();
  private readonly loop: PollLoop;
  private takeOver: boolean;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly runner: EtlRunner;

  constructor(private readonly o: EtlWorkerOptions) {
    this.runner = o.pool ?? { run: (task) => runEtlTask(o, task), close: async () => {} };
    this.concurrency = o.concurrency ?? 1;
    this.leaseMs = o.leaseMs ?? 10 * 60_000;
    this.takeOver = o.takeOverRunningAtStart ?? false;
    this.loop = new PollLoop(() => this.poll(), o.pollMs ?? 500, (err) => this.o.log?.error({ err }, 'etl poll failed'));
  }

  start(): void {
    this.loop.start();
  }

  /** Looks for work now (a payload was just stored). */
  kick(): void {
    this.loop.kick();
  }

  async stop(): Promise<void> {
    this.loop.stop();
    await Promise.allSettled([...this.running.values()]);
    await this.runner.close();
  }

  private async poll(): Promise<void> {
    const free = this.concurrency - this.running.size;
    if (free <= 0) return;
    const now = new Date().toISOString();
    const due = await this.o.readStore.find<EtlJobDoc>('etl_jobs', {
      filter: { status: 'pending', next_attempt_at: { $lte: now } },
      sort: [['next_attempt_at', 1]],
      limit: free * 4,
    });
    const leases = this.o.leases;
    const orphans = await this.o.readStore.find<EtlJobDoc>('etl_jobs', {
      // Under leases a running job is an orphan when its lease can be taken (tried below).
      filter: this.takeOver || leases ? { status: 'running' } : { status: 'running', lease_until: { $lte: now } },
      sort: [['next_attempt_at', 1]],
      limit: free * 4,
    });
    const candidates = [...orphans, ...due].sort((a, b) => a.tier_priority - b.tier_priority || a.id - b.id);
    for (const job of candidates) {
      if (this.running.size >= this.concurrency) break;
      if (this.running.has(job._id)) continue;
      const lease = leases ? await leases.store.acquire(jobLease(job._id), leases.holder, leases.leaseMs) : null;
      if (leases && !lease) continue;
      const claim = await startEtlJob(this.o.eventStore, job._id, this.id, this.leaseMs, { takeOverRunning: this.takeOver || !!lease });
      if (!claim) {
        if (lease) await leases!.store.remove(lease);
        continue;
      }
      const work = (lease ? this.runLeased(claim, lease) : this.run(claim)).finally(() => {
        this.running.delete(job._id);
        this.kick();
      });
      this.running.set(job._id, work);
    }
    this.takeOver = false;
  }

  /** Runs a job while renewing its lease; a job whose lease was taken records no outcome. */
  private async runLeased(claim: ClaimedJob, lease: Lease): Promise<void> {
    const leases = this.o.leases!;
    let held: Lease | null = lease;
    const renew = async () => {
      try {
        held = held && (await leases.store.renew(held, leases.leaseMs));
        if (!held) this.o.log?.warn({ job: claim.stream }, 'etl job lease was taken by another worker; this run stops');
      } catch (err) {
        this.o.log?.warn({ err, job: claim.stream }, 'could not renew an etl job lease');
      }
    };
    let renewing: Promise<void> | null = null;
    const timer = setInterval(() => {
      renewing ??= renew().finally(() => (renewing = null));
    }, leases.renewMs);
    try {
      await this.run(claim, () => held === null);
    } finally {
      clearInterval(timer);
      await renewing;
      if (held) await leases.store.remove(held).catch(() => {});
    }
  }

  private async run(claim: ClaimedJob, lost: () => boolean = () => false): Promise<void> {
    const upload = claim.state.accepted!;
    const log = this.o.log?.child({ job: claim.stream, provider: upload.provider, attempt: claim.state.attempt });
    try {
      const user = (await loadState(this.o.eventStore, userStream(upload.user_id), userState)).state;
      if (user.status !== 'active') {
        await finishEtlJob(this.o.eventStore, claim.stream, claim.state, claim.revision, { kind: 'discarded', reason: 'user deleted' });
        return;
      }
      const started = Date.now();
      const outcome = await this.runner.run({ jobStream: claim.stream, upload, claimRevision: claim.revision });
      if (lost()) {
        log?.warn('etl job lease lost while it ran; leaving the job to the worker that took it');
        return;
      }
      await finishEtlJob(this.o.eventStore, claim.stream, claim.state, claim.revision, outcome);
      if (outcome.kind === 'succeeded' || outcome.kind === 'unreadable') log?.info({ records: outcome.records, rejected: outcome.rejected, unchanged: outcome.unchanged, unreadable: outcome.kind === 'unreadable', ms: Date.now() - started }, 'etl job done');
      else log?.info({ reason: outcome.reason }, 'etl job discarded');
    } catch (err) {
      // The upload was erased (its user deleted, or its provider's data) while it ran: nothing to record.
      if (err instanceof StreamDeletedError || (err instanceof DomainError && err.code === 'gone')) {
        log?.info('etl job was erased while it ran');
        return;
      }
      // On the upload stream only: another worker took the job over. Elsewhere (the job's ingest
      // stream) it is a failure like any other.
      if (err instanceof ConcurrencyError && err.streamName === claim.stream) {
        log?.warn('etl job was taken over by another worker; dropping this run');
        return;
      }
      if (lost()) return;
      const message = err instanceof Error ? err.message : String(err);
      log?.warn({ err: message }, 'etl job failed');
      try {
        await finishEtlJob(this.o.eventStore, claim.stream, claim.state, claim.revision, { kind: 'failed', error: message });
      } catch (e) {
        if (!(e instanceof ConcurrencyError || e instanceof StreamDeletedError)) log?.error({ err: e }, 'could not record the etl failure');
      }
    }
  }
}
