import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { deadlineExceeded, etlDeadlineMs, memoryExceeded } from './etlLimits.js';
import { BULK_UPLOAD_BYTES, type EtlRunOutcome, type EtlTask } from './etlTask.js';
import { EtlThreadHandle, type ThreadRunResult } from './etlThreadHandle.js';
import { StoreFailureError } from '../../shared/transientErrors.js';

/** Runs claimed ETL jobs somewhere; `close` releases whatever that took. */
export interface EtlRunner {
  run(task: EtlTask): Promise<EtlRunOutcome>;
  close(): Promise<void>;
}

/**
 * Jobs of the small lane one ETL thread runs at once. A small job spends most of its time waiting
 * for durable writes (its start, its records, its ledger claims and commits, its outcome, the
 * queue's claim and completion), so several in flight share those fsyncs (each store commits what
 * arrives together in one write) instead of queueing one behind another. Eight rather than four
 * (issue 37): a backlog of one-line uploads then shares each fsync among about twice as many jobs
 * (BENCHMARKS.md "Issue 37: the ETL thread's writes shared"). Sixteen rather than eight once the
 * appends of a turn go as one call (coalescedAppends.ts): twice as many jobs meet in each turn, so
 * the ETL handler's and the ETL thread's appends take about half as many calls (0.55 a job against
 * 1.05 at eight), and the service's CPU per one-line upload fell from 8.0-8.1 to 6.8-7.1 ms in
 * alternating runs; 32 took more calls and more CPU than 16 (7.4-7.6 ms; BENCHMARKS.md "Issue 37:
 * small ETL jobs as one batch"). A small job holds a payload sent under BULK_UPLOAD_BYTES, and the
 * thread's heap cap still ends a thread whatever its jobs hold.
 */
export const SMALL_JOBS_PER_THREAD = 16;

/**
 * Young generation of a thread run for one job alone (a bulk job's; a small job's run again
 * alone), in MiB, where every other thread has THREAD_YOUNG_GENERATION_MB (12): ~10.7 MiB
 * semi-spaces instead of 4. A bulk job holds each record from its parse until its block's ledger
 * note (500 records at a time on a first import), and each batch until its append; at ~10 KB
 * allocated per device-a record, 4 MiB semi-spaces were scavenged every ~380 records, so what was
 * held outlived two scavenges, was promoted, and marked again and again (25-31 mark-compacts of
 * each bulk thread's heap per 100k records). At 32 MiB: ~75 scavenges and 4-11 mark-compacts per
 * 100k records (at 24 MiB: ~138 and 7-23), for ~20 MiB more committed on the one bulk thread a
 * default service runs (ETL_BULK_CONCURRENCY). BENCHMARKS.md, "Issue 38: the bulk ETL threads'
 * batches and young generation (h20/etl …)"; docs/memory.md, "The threads' heaps".
 */
export const BULK_THREAD_YOUNG_GENERATION_MB = 32;

/** Runs of jobs on threads of their own at once, per lane. */
class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly size: number) {}

  /**
   * Runs `run` in a slot. `run` may hand over (`holdUntil`) a promise the slot waits for after
   * `run` has answered: a bulk job's thread closing, so that the next bulk job's thread does not
   * start before the last one's heap is gone (at most `size` bulk threads' heaps at once).
   */
  async with<T>(run: (holdUntil: (p: Promise<void>) => void) => Promise<T>): Promise<T> {
    if (this.used >= this.size) await new Promise<void>((r) => this.waiting.push(r));
    else this.used++;
    let held: Promise<void> | null = null;
    try {
      return await run((p) => (held = p));
    } finally {
      const release = () => {
        const next = this.waiting.shift();
        if (next) next();
        else this.used--;
      };
      if (held) void (held as Promise<void>).then(release, release);
      else release();
    }
  }
}

/**
 * ETL jobs on worker threads, where each attempt can be stopped (contracts §18,
 * docs/etl-isolation.md). Small jobs share `config.etlConcurrency` long-lived threads,
 * SMALL_JOBS_PER_THREAD at a time each (throughput: they wait on durable writes together). A bulk
 * job (an upload of BULK_UPLOAD_BYTES or more) runs on a thread started for that attempt alone,
 * `config.etlBulkConcurrency` at once, and ended after it. Every run has a wall-clock deadline
 * (`etlDeadlineMs`) and every thread an old-generation cap (`ETL_MEMORY_MB`); crossing either
 * ends the thread and fails that job with `EtlAttemptStopped`.
 *
 * A job that was on a shared thread when it ended (for any job's deadline, or out of memory, or a
 * crash with others on it) is not failed: it runs again, at once, on a fresh thread of its own (one such run at a time), with
 * a fresh deadline. Run alone, the job that exhausted the memory does so again and is failed
 * `memory`; the others finish. A rerun resumes from the job's last checkpoint and re-sends what
 * came after it at the same revisions (runEtlJob.ts), so nothing is written twice.
 */
export class EtlThreadPool implements EtlRunner {
  private small: EtlThreadHandle[] = [];
  private readonly queued: (() => void)[] = [];
  private readonly isolated = new Set<EtlThreadHandle>();
  private readonly bulkSlots: Slots;
  private readonly rerunSlots = new Slots(1);
  /** Counts closes: a job whose thread a close ended is not run again. */
  private closes = 0;
  /**
   * The closes of threads whose job has ended (runAlone): `close` waits for them too. Not waited
   * for, such a thread closed its record ledger after the pool's close had answered, and a test's
   * teardown met the ledger's files in a data directory it was removing.
   */
  private readonly closing = new Set<Promise<void>>();

  /** `parsersModule`: tests only (EtlThreadData). */
  constructor(
    private readonly config: Config,
    private readonly options: { log?: Logger; parsersModule?: URL } = {},
  ) {
    this.bulkSlots = new Slots(config.etlBulkConcurrency);
  }

  async run(task: EtlTask): Promise<EtlRunOutcome> {
    if (task.upload.bytes >= BULK_UPLOAD_BYTES) return this.bulkSlots.with((holdUntil) => this.runAlone(task, holdUntil));
    const deadlineMs = etlDeadlineMs(this.config.etlLimits, task.upload.bytes);
    const closes = this.closes;
    const result = await (await this.smallThread()).run(task, deadlineMs);
    this.queued.shift()?.();
    // Not known to be the cause: the thread ended for another job's deadline; or its own deadline
    // passed while other jobs shared the thread (one spinning in synchronous code holds every job
    // of the thread, and whichever deadline comes first says nothing of who spun); or it died
    // with other jobs on it, or ran out of memory with heap that earlier jobs may have left.
    // Judged alone.
    const suspect =
      result.kind === 'collateral' || (result.kind === 'stopped' && !result.alone) || (result.kind === 'died' && (!result.alone || result.cause === 'memory'));
    if (suspect && closes !== this.closes) throw new Error('the ETL pool was closed during this attempt');
    if (suspect) {
      this.options.log?.warn({ job: task.jobStream, why: result.kind === 'died' ? result.cause : 'deadline' }, 'the shared ETL thread of this job ended; running it again on a fresh thread of its own');
      return this.rerunSlots.with((holdUntil) => this.runAlone(task, holdUntil));
    }
    return this.answer(result, deadlineMs);
  }

  async close(): Promise<void> {
    const threads = [...this.small, ...this.isolated];
    this.closes++;
    this.small = [];
    for (const waiter of this.queued.splice(0)) waiter();
    await Promise.all([...threads.map((t) => t.close()), ...this.closing]);
  }

  /** A run on a thread started for it alone: whatever ends the thread, this job caused it. */
  private async runAlone(task: EtlTask, holdUntil: (closed: Promise<void>) => void): Promise<EtlRunOutcome> {
    const deadlineMs = etlDeadlineMs(this.config.etlLimits, task.upload.bytes);
    const thread = new EtlThreadHandle(this.config, this.options.parsersModule?.href, BULK_THREAD_YOUNG_GENERATION_MB);
    this.isolated.add(thread);
    try {
      return this.answer(await thread.run(task, deadlineMs), deadlineMs);
    } finally {
      this.isolated.delete(thread);
      // Closing (its stores, then the thread) is not the job's time: the outcome is recorded meanwhile.
      const closed: Promise<void> = thread.close().finally(() => this.closing.delete(closed));
      this.closing.add(closed);
      // The slot is the thread's until it is closed, not the job's (Slots.with).
      holdUntil(closed);
    }
  }

  private answer(result: ThreadRunResult, deadlineMs: number): EtlRunOutcome {
    switch (result.kind) {
      case 'outcome':
        return result.outcome;
      case 'error':
        throw result.transient ? new StoreFailureError(result.message, result.transient) : new Error(result.message);
      case 'stopped':
        throw deadlineExceeded(deadlineMs);
      case 'died':
        if (result.cause === 'memory') throw memoryExceeded(this.config.etlLimits.memoryMb);
        throw new Error(result.message);
      case 'collateral':
        // A job on a thread of its own is collateral only to the pool closing.
        throw new Error('the ETL pool was closed during this attempt');
    }
  }

  /** The least busy live shared thread with room, starting threads up to `etlConcurrency`; else waits for room. */
  private async smallThread(): Promise<EtlThreadHandle> {
    for (;;) {
      this.small = this.small.filter((t) => t.alive);
      if (this.small.length < this.config.etlConcurrency) {
        const thread = new EtlThreadHandle(this.config, this.options.parsersModule?.href);
        this.small.push(thread);
        return thread;
      }
      const least = this.small.reduce((a, b) => (b.load < a.load ? b : a));
      if (least.load < SMALL_JOBS_PER_THREAD) return least;
      await new Promise<void>((r) => this.queued.push(r));
    }
  }
}
