import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { LoadedRun } from '../../../commands/sync/queueSyncRun.js';
import { SYNC_RUNS, type SyncRunDoc } from '../../../projections/sync/syncRunsProjection.js';
import type { PullSchedule } from '../../../queries/sync/syncFacts.js';
import { PollLoop } from '../../shared/pollLoop.js';
import type { PullConnector } from '../../sources/shared/pullConnector.js';
import type { WorkQueue } from '../../workqueue/workQueue.js';
import { JobRunner } from '../jobs/jobRunner.js';
import { pullJobHandler } from './pullJob.js';
import type { PullDeps, PullOutcome } from './runPull.js';
import { scheduleJobHandler } from './scheduleRuns.js';
import { SYNC_RUN_KIND, SYNC_SCHEDULE_KIND, syncRunJob } from './syncJobs.js';

export type SyncWorkerOptions = PullDeps & {
  queue: WorkQueue;
  /** Names this process in the queue (default: a fresh id). */
  holder?: string;
  log?: Logger;
  /** Pulls run at once in this process. */
  concurrency?: number;
  pollMs?: number;
  /** How often runs the read model shows waiting without a queue job are looked for (the backstop; default 30 s). */
  sweepEveryMs?: number;
  /** Run connections' schedules in this process (default true). */
  schedule?: boolean;
  /**
   * The providers pulled on a schedule and on request (default: every connector). A push
   * provider that can be asked for its history has a connector for its backfill run only.
   */
  scheduled?: Readonly<Partial<Record<string, PullConnector>>>;
};

/** A run waiting this long in the read model without a live job is enqueued by the sweep (its enqueue was lost in a crash). */
const SWEEP_AGE_MS = 30_000;
const SWEEP_BATCH = 200;

/**
 * The sync engine of a process (issue 26): pulls and connections' schedules are jobs on the
 * work queue (syncJobs.ts), run by a job runner of their own on the engine's clock (tests move
 * it), so due times, leases and the one-pull-per-connection lock are the queue's. Runs are
 * enqueued where they are queued (`enqueue`); a sweep of the unfinished runs the read model shows
 * enqueues any whose job was lost between its append and its enqueue (a crash).
 */
export class SyncWorker {
  readonly id: string;
  private readonly runner: JobRunner;
  private readonly sweepLoop: PollLoop;
  private outcomes: PullOutcome[] | null = null;

  constructor(private readonly o: SyncWorkerOptions) {
    this.id = o.holder ?? `sync-${randomUUID()}`;
    const clock = () => o.now().getTime();
    this.runner = new JobRunner({ queue: o.queue, holder: this.id, leaseMs: o.settings.leaseMs, pollMs: o.pollMs ?? 1_000, log: o.log, clock });
    this.runner.register(
      pullJobHandler({ ...o, concurrency: o.concurrency ?? 2, onOutcome: (outcome) => this.outcomes?.push(outcome) }),
    );
    if (o.schedule !== false) {
      this.runner.register(scheduleJobHandler({ ...o, connectors: o.scheduled ?? o.connectors, enqueueRun: (run) => this.enqueue(run) }));
    }
    this.sweepLoop = new PollLoop(() => this.sweep(SWEEP_AGE_MS).then(() => {}), o.sweepEveryMs ?? 30_000, (err) => o.log?.warn({ err }, 'sweeping for sync runs without a queue job failed'));
  }

  start(): void {
    this.runner.start();
    this.sweepLoop.start();
  }

  kick(): void {
    this.runner.kick();
  }

  /** Pulls and schedule jobs running in this process now. */
  get active(): number {
    return this.runner.active;
  }

  /** The engine's clock (tests move it). */
  now(): Date {
    return this.o.now();
  }

  /** The schedule freshness reports `next_pull_at` from. */
  pullSchedule(): PullSchedule {
    return { intervalMs: this.o.settings.intervalMs, pulls: (p) => this.pulls(p), now: this.o.now() };
  }

  /** Whether this service pulls the provider (it has a pull connector). */
  pulls(provider: string): boolean {
    return (this.o.scheduled ?? this.o.connectors)[provider] !== undefined;
  }

  /** Whether a run is this engine's to pull: a push provider's runs other than its backfill are its deliveries' own (syncTriggers.ts). */
  private pulled(run: { provider: string; trigger: string }): boolean {
    return this.o.connectors[run.provider] !== undefined && (this.pulls(run.provider) || run.trigger === 'backfill');
  }

  /** Puts a just-queued run on the work queue and wakes the runner. */
  async enqueue(run: LoadedRun): Promise<void> {
    const q = run.state.queued;
    if (!q || !this.pulled(q)) return;
    const { created } = await this.o.queue.enqueue(syncRunJob({ ...q, stream: run.stream, due: run.state.nextAttemptAt ?? q.created_at }));
    if (created) this.kick();
  }

  /**
   * Cancels the live jobs of these runs (the runs were cancelled): a pull under way aborts at its
   * next renewal, before its lease runs out. Answers when the last running one's lease would have
   * run out (0 when none ran), for a caller that must wait until no pull of them runs (erasure).
   */
  async stopPulls(streams: readonly string[], reason: string): Promise<number> {
    let until = 0;
    for (const stream of streams) {
      const live = await this.o.queue.findLive(SYNC_RUN_KIND, stream);
      if (!live) continue;
      if (live.state === 'running') until = Math.max(until, live.leaseExpiresAt ?? 0);
      await this.o.queue.cancelJob(live.id, { reason, now: this.o.now().getTime() });
    }
    return until;
  }

  async stop(): Promise<void> {
    this.sweepLoop.stop();
    await this.runner.stop();
  }

  /**
   * One pass on the engine's clock, for a caller that drives the engine itself (tests, with the
   * loop not started): runs missing their job are enqueued, due schedules queue their runs, then
   * one claim of due pulls (at most `concurrency`, one per connection) runs to its end. Answers
   * how the pulls ended.
   */
  async runDue(): Promise<PullOutcome[]> {
    await this.sweep(0);
    for (let round = 0; round < 8 && (await this.runner.runDue([SYNC_SCHEDULE_KIND])) > 0; round++);
    const outcomes: PullOutcome[] = [];
    this.outcomes = outcomes;
    try {
      await this.runner.runDue([SYNC_RUN_KIND]);
    } finally {
      if (this.outcomes === outcomes) this.outcomes = null;
    }
    return outcomes;
  }

  /**
   * The backstop: unfinished runs the read model shows due for `ageMs` (and runs left running by
   * a version that leased runs on their streams) whose job is not on the queue get one. Reads the
   * unfinished runs only, in bounded pages, never the connections.
   */
  private async sweep(ageMs: number): Promise<number> {
    const cutoff = new Date(this.o.now().getTime() - ageMs).toISOString();
    const provider = { $in: Object.keys(this.o.connectors) };
    const waiting = await this.o.readStore.find<SyncRunDoc>(SYNC_RUNS, {
      filter: { status: { $in: ['queued', 'retrying', 'rate_limited'] }, next_attempt_at: { $lte: cutoff }, provider },
      sort: [['next_attempt_at', 1]],
      limit: SWEEP_BATCH,
    });
    const orphans = await this.o.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { status: 'running', lease_until: { $lte: cutoff }, provider }, sort: [['lease_until', 1]], limit: SWEEP_BATCH });
    let enqueued = 0;
    for (const doc of [...orphans, ...waiting]) {
      if (!this.pulled(doc)) continue;
      const { created } = await this.o.queue.enqueue(syncRunJob({ ...doc, stream: doc._id, due: doc.next_attempt_at ?? cutoff }));
      if (created) enqueued++;
    }
    if (enqueued > 0) {
      this.o.log?.info({ enqueued }, 'sync runs without a queue job enqueued');
      this.kick();
    }
    return enqueued;
  }
}
