import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { claimSyncRun, LeaseLostError, renewLease, type HeldRun } from '../../../commands/sync/syncRunTransitions.js';
import { SYNC_RUNS, type SyncRunDoc } from '../../../projections/sync/syncRunsProjection.js';
import type { PullSchedule } from '../../../queries/sync/syncFacts.js';
import { PollLoop } from '../../shared/pollLoop.js';
import type { PullConnector } from '../../sources/shared/pullConnector.js';
import { runPull, type PullDeps, type PullOutcome } from './runPull.js';
import { scheduleDueRuns } from './scheduleRuns.js';

export type SyncWorkerOptions = PullDeps & {
  log?: Logger;
  /** Pulls run at once in this process. */
  concurrency?: number;
  pollMs?: number;
  /** One process owns the embedded store: runs found running at start-up were orphaned by a crash. */
  takeOverRunningAtStart?: boolean;
  /** Waits until the sync_runs read model holds the log up to `position` (runs just scheduled are then found). */
  settleRuns?: (position: number) => Promise<void>;
  /** How often polling looks for connections whose scheduled pull is due (default a minute; `runDue` always does). */
  scheduleEveryMs?: number;
  /** Queue scheduled runs in this process (default true). */
  schedule?: boolean;
  /**
   * The providers pulled on a schedule and on request (default: every connector). A push
   * provider that can be asked for its history has a connector for its backfill run only.
   */
  scheduled?: Readonly<Partial<Record<string, PullConnector>>>;
};

/**
 * Takes due pulls from the sync_runs read model: queued ones, ones whose wait after a failed
 * attempt is over, and running ones whose lease ran out (their process died). Each is claimed by
 * an append on its run stream (one process wins), run while its lease is renewed every third of
 * its length, and dropped at once when a renewal is refused (another process took it over, or the
 * run was cancelled). At most one pull of a connection runs at a time. Also queues each active
 * connection's scheduled pull (scheduleRuns.ts).
 */
export class SyncWorker {
  readonly id = `sync-${randomUUID()}`;
  private readonly running = new Map<string, Promise<PullOutcome>>();
  private readonly loop: PollLoop;
  private takeOver: boolean;
  private lastScheduled = 0;

  constructor(private readonly o: SyncWorkerOptions) {
    this.takeOver = o.takeOverRunningAtStart ?? false;
    this.loop = new PollLoop(() => this.poll(), o.pollMs ?? 5_000, (err) => this.o.log?.error({ err }, 'sync poll failed'));
  }

  start(): void {
    this.loop.start();
  }

  kick(): void {
    this.loop.kick();
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

  async stop(): Promise<void> {
    this.loop.stop();
    await Promise.allSettled([...this.running.values()]);
  }

  /** One pass: queue scheduled runs, claim what is due, and wait for those pulls to end (tests drive it with their own clock). */
  async runDue(): Promise<PullOutcome[]> {
    const started = await this.claimDue(true);
    return Promise.all(started);
  }

  private async poll(): Promise<void> {
    await this.claimDue(false);
  }

  private async claimDue(scheduleNow: boolean): Promise<Promise<PullOutcome>[]> {
    const now = this.o.now();
    // Slots are an interval long: looking for due ones once a minute is enough, and spares the read store.
    const scheduleDue = scheduleNow || now.getTime() - this.lastScheduled >= (this.o.scheduleEveryMs ?? 60_000);
    if (this.o.schedule !== false && scheduleDue) {
      this.lastScheduled = now.getTime();
      const scheduled = await scheduleDueRuns({ ...this.o, connectors: this.o.scheduled ?? this.o.connectors }, now);
      if (scheduled > 0) await this.o.settleRuns?.(scheduled);
    }
    const free = (this.o.concurrency ?? 2) - this.running.size;
    if (free <= 0) return [];
    const iso = now.toISOString();
    // Only providers with a connector here: a push delivery carries its own run (syncTriggers.ts).
    const provider = { $in: Object.keys(this.o.connectors) };
    const due = await this.o.readStore.find<SyncRunDoc>(SYNC_RUNS, {
      filter: { status: { $in: ['queued', 'retrying', 'rate_limited'] }, next_attempt_at: { $lte: iso }, provider },
      sort: [['next_attempt_at', 1]],
      limit: free * 4,
    });
    const orphans = await this.o.readStore.find<SyncRunDoc>(SYNC_RUNS, {
      filter: this.takeOver ? { status: 'running', provider } : { status: 'running', lease_until: { $lte: iso }, provider },
      sort: [['lease_until', 1]],
      limit: free * 4,
    });
    this.takeOver = false;
    // A push provider's runs other than its backfill are its deliveries' own (syncTriggers.ts): never pulled.
    const candidates = [...orphans, ...due].filter((r) => this.pulls(r.provider) || r.trigger === 'backfill').sort((a, b) => a.priority - b.priority || a.id - b.id);
    const started: Promise<PullOutcome>[] = [];
    const busy = new Set<string>();
    for (const run of candidates) {
      if (this.running.size >= (this.o.concurrency ?? 2)) break;
      const connection = `${run.user_id}:${run.provider}`;
      if (this.running.has(run._id) || busy.has(connection)) continue;
      if (await this.connectionBusy(run, iso)) continue;
      const held = await claimSyncRun(this.o.eventStore, run._id, this.id, this.o.settings.leaseMs, now);
      if (!held) continue;
      busy.add(connection);
      const work = this.hold(held).finally(() => {
        this.running.delete(run._id);
        this.kick();
      });
      this.running.set(run._id, work);
      started.push(work);
    }
    return started;
  }

  /** Another pull of the same connection runs on a live lease (here or elsewhere): one at a time. */
  private async connectionBusy(run: SyncRunDoc, nowIso: string): Promise<boolean> {
    const others = await this.o.readStore.find<SyncRunDoc>(SYNC_RUNS, {
      filter: { user_id: run.user_id, provider: run.provider, status: 'running', lease_until: { $gt: nowIso } },
      limit: 2,
    });
    return others.some((o) => o._id !== run._id);
  }

  /** Runs a claimed pull, renewing its lease; a refused renewal aborts the pull. */
  private async hold(claimed: HeldRun): Promise<PullOutcome> {
    let run = claimed;
    const abort = new AbortController();
    let appending: Promise<unknown> = Promise.resolve();
    const renewEvery = Math.max(1, Math.floor(this.o.settings.leaseMs / 3));
    const timer = setInterval(() => {
      appending = appending.then(async () => {
        if (abort.signal.aborted) return;
        try {
          run = await renewLease(this.o.eventStore, run, this.o.settings.leaseMs, this.o.now());
        } catch (err) {
          if (err instanceof LeaseLostError) abort.abort(err);
          else this.o.log?.warn({ err, run: run.id }, 'could not renew a sync lease');
        }
      });
    }, renewEvery);
    const log = this.o.log?.child({ run: claimed.id, provider: claimed.state.queued!.provider, attempt: claimed.state.attempt });
    try {
      const outcome = await runPull(this.o, {
        current: () => run,
        // Serialised with the renewals: both append at the revision the worker holds.
        apply: (f) => {
          const step = appending.then(async () => {
            run = await f(run);
          });
          appending = step.catch(() => {});
          return step;
        },
        signal: abort.signal,
      });
      if (outcome === 'lost') log?.warn('sync run was taken over or cancelled elsewhere; dropped here');
      else log?.info({ outcome }, 'sync run attempt ended');
      return outcome;
    } catch (err) {
      log?.error({ err: err instanceof Error ? err.message : String(err) }, 'sync run attempt could not be recorded');
      return 'lost';
    } finally {
      clearInterval(timer);
      await appending;
    }
  }
}
