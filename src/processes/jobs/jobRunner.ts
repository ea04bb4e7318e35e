import type { Logger } from 'pino';
import { PollLoop } from '../../shared/pollLoop.js';
import { backoffDelay, DEFAULT_BACKOFF, transientKind, type Backoff } from '../../shared/transientErrors.js';
import { LostLeaseError, type Claimed, type JobLease, type Json, type WorkQueue } from '../../workqueue/workQueue.js';
import { JobCancelled, JobParked, JobRetry, type JobContext, type JobHandler } from './jobHandler.js';

export type JobRunnerOptions = {
  queue: WorkQueue;
  /** Names this process in the queue (`holder`): instance, host and pid, so an operator can tell who runs what. */
  holder: string;
  /** Lease of an attempt unless its handler names one. */
  leaseMs: number;
  pollMs?: number;
  /** How often finished jobs past their retention are removed (bounded batches). */
  purgeEveryMs?: number;
  log?: Logger;
  clock?: () => number;
  /** Pauses while a handler's store fails for a while, inside the same attempt (default: 1 s doubling to 30 s). */
  transientBackoff?: Backoff;
};

type Running = { abort: AbortController; done: Promise<void> };

const PURGE_BATCH = 1000;

/**
 * The one loop that runs background jobs in a process (issue 26): claims due jobs of the kinds
 * its handlers serve (each kind up to its concurrency), renews each lease every third of it,
 * and aborts the handler's signal the moment a renewal finds the lease lost (another process
 * took the job over: from then on this one writes nothing). The outcome (complete, fail, park,
 * cancel) is written fenced by the lease's generation. Every few minutes it removes finished
 * jobs past their retention.
 */
export class JobRunner {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly running = new Map<string, Map<string, Running>>();
  private readonly loop: PollLoop;
  private readonly clock: () => number;
  private lastPurge = 0;
  private stopping = false;

  constructor(private readonly o: JobRunnerOptions) {
    this.clock = o.clock ?? Date.now;
    this.loop = new PollLoop(() => this.poll(), o.pollMs ?? 500, (err) => o.log?.error({ err }, 'job poll failed'));
  }

  get queue(): WorkQueue {
    return this.o.queue;
  }

  register(handler: JobHandler): this {
    if (this.handlers.has(handler.kind)) throw new Error(`job kind ${handler.kind} registered twice`);
    this.handlers.set(handler.kind, handler);
    this.running.set(handler.kind, new Map());
    return this;
  }

  start(): void {
    this.stopping = false;
    this.loop.start();
  }

  /** Looks for work now (a job was just enqueued). */
  kick(): void {
    this.loop.kick();
  }

  /** How many jobs run here now (tests, the runtime view). */
  get active(): number {
    let n = 0;
    for (const m of this.running.values()) n += m.size;
    return n;
  }

  /** The jobs running here now per kind, kinds with none left out (what a stopping service waits for). */
  activeByKind(): Record<string, number> {
    const byKind: Record<string, number> = {};
    for (const [kind, m] of this.running) if (m.size > 0) byKind[kind] = m.size;
    return byKind;
  }

  /**
   * Stops claiming and stops the running handlers at their next check. A job a handler did not
   * finish is handed back due at once (its attempt counts), so the next process takes it up
   * without waiting for its lease to run out.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.loop.stop();
    const all = [...this.running.values()].flatMap((m) => [...m.values()]);
    for (const r of all) r.abort.abort(new Error('the service is stopping'));
    await Promise.allSettled(all.map((r) => r.done));
  }

  /**
   * One claim over the kinds with the same lease and the same room (an idle poll is one query per
   * lease length and room, not one per kind), at most as many jobs as that room, so no kind goes
   * over its concurrency; a round that took some is followed by another (a few at most). Kinds of
   * different room are not claimed together: one claim is then bounded by its smallest room, so
   * beside a kind with room for one (a reactor, the bulk ETL lane) the small ETL jobs came one per
   * claim, each its own write on the queue (issue 37). The claims of one round are asked for at once.
   */
  private async poll(): Promise<void> {
    for (let round = 0; round < 8 && !this.stopping; round++) if (!(await this.claimRound())) break;
    await this.purge();
  }

  private async claimRound(): Promise<boolean> {
    const groups = new Map<string, { leaseMs: number; kinds: string[]; n: number; tenantCap: number }>();
    for (const [kind, handler] of this.handlers) {
      const free = handler.concurrency - this.running.get(kind)!.size;
      if (free <= 0) continue;
      const leaseMs = this.leaseOf(handler);
      const key = `${leaseMs}/${free}`;
      const group = groups.get(key) ?? { leaseMs, kinds: [], n: free, tenantCap: tenantCapOf(handler) };
      group.kinds.push(kind);
      group.tenantCap = Math.min(group.tenantCap, tenantCapOf(handler));
      groups.set(key, group);
    }
    if (this.stopping || groups.size === 0) return false;
    // The groups' kinds are disjoint, so their claims are asked for together: on the embedded queue
    // they go to its thread in one message and share one transaction (issue 37).
    const now = this.clock();
    const claims = await Promise.allSettled(
      [...groups.values()].map(({ leaseMs, ...group }) => this.o.queue.claim({ kinds: group.kinds, n: group.n, holder: this.o.holder, leaseMs, now, tenantCap: group.tenantCap })),
    );
    // The jobs of the claims that succeeded run even when another claim failed: they are leased to this process.
    let took = false;
    for (const claim of claims) {
      if (claim.status === 'rejected') continue;
      for (const c of claim.value) void this.launch(this.handlers.get(c.job.kind)!, c);
      took ||= claim.value.length > 0;
    }
    const failed = claims.find((claim) => claim.status === 'rejected');
    if (failed) throw failed.reason;
    return took;
  }

  /**
   * One claim of these kinds now (up to their free slots), and the attempts it started run to
   * their end: for a caller that drives the runner itself instead of its loop (a test's clock,
   * the sync engine's `runDue`). Answers how many jobs it ran.
   */
  async runDue(kinds: readonly string[]): Promise<number> {
    const handlers = kinds.map((k) => this.handlers.get(k)).filter((h): h is JobHandler => h !== undefined);
    if (handlers.length === 0 || this.stopping) return 0;
    const n = Math.min(...handlers.map((h) => h.concurrency - this.running.get(h.kind)!.size));
    if (n <= 0) return 0;
    const tenantCap = Math.min(...handlers.map(tenantCapOf));
    const claimed = await this.o.queue.claim({ kinds: handlers.map((h) => h.kind), n, holder: this.o.holder, leaseMs: this.leaseOf(handlers[0]!), now: this.clock(), tenantCap });
    await Promise.all(claimed.map((c) => this.launch(this.handlers.get(c.job.kind)!, c)));
    return claimed.length;
  }

  private async purge(): Promise<void> {
    const now = this.clock();
    if (now - this.lastPurge < (this.o.purgeEveryMs ?? 10 * 60_000)) return;
    this.lastPurge = now;
    const removed = await this.o.queue.purgeExpired({ now, limit: PURGE_BATCH });
    if (removed > 0) this.o.log?.debug({ removed }, 'finished jobs past their retention removed');
  }

  private leaseOf(handler: JobHandler): number {
    return handler.leaseMs ?? this.o.leaseMs;
  }

  private launch(handler: JobHandler, claimed: Claimed): Promise<void> {
    const abort = new AbortController();
    const mine = this.running.get(handler.kind)!;
    const done = this.attempt(handler, claimed, abort)
      .catch((err: unknown) => this.o.log?.error({ err, job: claimed.job.id, kind: handler.kind }, 'could not record a job outcome'))
      .finally(() => {
        mine.delete(claimed.job.id);
        this.kick();
      });
    mine.set(claimed.job.id, { abort, done });
    return done;
  }

  /**
   * Runs the handler; one that failed because a store failed for a while (busy, full, unreachable,
   * failing over: src/shared/transientErrors.ts) runs again after a capped back-off, within the
   * same attempt and lease, for as long as it takes (contracts §19): a busy store never spends a
   * job's attempts, so it never parks one. A lost lease or a stop ends the wait.
   */
  private async runThroughStoreFailures(handler: JobHandler, context: JobContext, log: Logger | undefined): Promise<void | { rescheduleAt: number }> {
    for (let stalls = 1; ; stalls++) {
      try {
        return await handler.run(context);
      } catch (err) {
        const kind = transientKind(err);
        if (!kind || context.signal.aborted) throw err;
        const ms = backoffDelay(stalls, this.o.transientBackoff ?? DEFAULT_BACKOFF);
        log?.warn({ kind, retries: stalls, retryInMs: ms }, 'job hit a store failure; running it again after a pause, no attempt spent');
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            context.signal.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, ms);
          context.signal.addEventListener('abort', done, { once: true });
        });
        if (context.signal.aborted) throw err;
      }
    }
  }

  private async attempt(handler: JobHandler, claimed: Claimed, abort: AbortController): Promise<void> {
    const { queue } = this.o;
    const leaseMs = this.leaseOf(handler);
    const log = this.o.log?.child({ job: claimed.job.id, kind: handler.kind, attempt: claimed.job.attempts });
    let lease: JobLease = claimed.lease;
    let lost = false;
    const loseLease = (why: string) => {
      if (lost) return;
      lost = true;
      log?.warn(why);
      abort.abort(new LostLeaseError(lease.jobId, lease.generation));
    };
    const renew = async (progress?: Json) => {
      try {
        lease = await queue.heartbeat(lease, { leaseMs, progress, now: this.clock() });
      } catch (err) {
        if (err instanceof LostLeaseError) loseLease('job lease lost; this attempt stops and writes nothing');
        else if (this.clock() >= lease.expiresAt) loseLease('job lease ran out before it could be renewed; this attempt stops');
        else log?.warn({ err }, 'could not renew a job lease; trying again');
        throw err;
      }
    };
    let renewing: Promise<void> | null = null;
    const timer = setInterval(() => {
      renewing ??= renew()
        .catch(() => {})
        .finally(() => (renewing = null));
    }, Math.max(1, Math.floor(leaseMs / 3)));
    const context: JobContext = { job: claimed.job, lease: () => lease, signal: abort.signal, renew };
    let outcome: { ok: true; rescheduleAt?: number } | { ok: false; err: unknown };
    try {
      const result = await this.runThroughStoreFailures(handler, context, log);
      outcome = { ok: true, rescheduleAt: result?.rescheduleAt };
    } catch (err) {
      outcome = { ok: false, err };
    } finally {
      clearInterval(timer);
      await renewing;
    }
    if (lost) return;
    const now = this.clock();
    try {
      if (outcome.ok && outcome.rescheduleAt !== undefined) return await queue.reschedule(lease, { runAt: outcome.rescheduleAt, now });
      if (outcome.ok) return await queue.complete(lease, { now });
      const err = outcome.err;
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof JobCancelled) return await queue.cancel(lease, { reason: message, now });
      if (err instanceof JobParked) {
        log?.warn({ err: message }, 'job parked for an operator');
        return await queue.park(lease, { error: message, progress: err.progress, now });
      }
      if (abort.signal.aborted && this.stopping) {
        // Stopping: handed back, due at once, for the next process to take up.
        return void (await queue.fail(lease, { error: 'the service stopped during this attempt', retryAt: now, now }));
      }
      const retry = err instanceof JobRetry ? err : null;
      const state = await queue.fail(lease, { error: message, retryAt: retry?.retryAt ?? null, progress: retry?.progress, now });
      log?.warn({ err: message, state }, state === 'dead' ? 'job failed its last attempt: dead-lettered' : 'job attempt failed; it will be tried again');
    } catch (err) {
      if (err instanceof LostLeaseError) return log?.warn('job lease lost before its outcome was written; the new holder records it');
      throw err;
    }
  }
}

/**
 * A tenant holds at most half a kind's slots (rounded up) while another tenant has a due job of
 * the kind (contracts §18; src/workqueue/fairLanes.ts): the rest stay for the others' turns.
 */
function tenantCapOf(handler: JobHandler): number {
  return Math.max(1, Math.ceil(handler.concurrency / 2));
}
