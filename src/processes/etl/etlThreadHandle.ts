import type { Worker } from 'node:worker_threads';
import type { Config } from '../../config.js';
import { THREAD_YOUNG_GENERATION_MB, siblingModule, startWorker } from '../../shared/workerThreads.js';
import type { EtlRunOutcome, EtlTask } from './etlTask.js';
import type { TransientKind } from '../../shared/transientErrors.js';

/** What an ETL thread (`etlThread.ts`) is started with. */
export type EtlThreadData = {
  config: Config;
  /**
   * Tests only: a module whose `parsers` export replaces parsers of the registry in the thread (a
   * decoder that never ends, one that allocates without bound). The service never passes it; no
   * setting reaches it.
   */
  parsersModule?: string;
};

/** Parent to thread. */
export type EtlThreadRequest = { type: 'run'; id: number; task: EtlTask } | { type: 'close' };
/** Thread to parent. */
export type EtlThreadReply =
  | { type: 'ready' }
  | { type: 'done'; id: number; outcome: EtlRunOutcome }
  /** `transient`: the store failed for a while (src/shared/transientErrors.ts), classified in the thread where the error still had its code. */
  | { type: 'error'; id: number; message: string; transient: TransientKind | null }
  | { type: 'closed' };

/**
 * How one run on a thread ended. `stopped`: its own deadline passed and the thread was
 * terminated, `alone` when no other job was on the thread (otherwise another job may have held
 * the thread's event loop all along, so the deadline does not say which job was slow). `died`: the thread ended under it (out of memory, or a crash), `alone` when no other
 * job was on the thread, so that this one caused it. `collateral`: the thread was terminated for
 * another job's deadline.
 */
export type ThreadRunResult =
  | { kind: 'outcome'; outcome: EtlRunOutcome }
  | { kind: 'error'; message: string; transient: TransientKind | null }
  | { kind: 'stopped'; alone: boolean }
  | { kind: 'died'; cause: 'memory' | 'crash'; message: string; alone: boolean }
  | { kind: 'collateral' };

type InFlight = { id: number; task: EtlTask; deadlineMs: number; timer: NodeJS.Timeout | null; settle: (r: ThreadRunResult) => void };

/** A thread that has not opened its stores in this long is ended (its jobs are run again elsewhere). */
const START_WAIT_MS = 60_000;
/** How long `close` waits for the thread to close its stores before ending it anyway. */
const CLOSE_WAIT_MS = 5_000;

/**
 * One ETL worker thread as the pool sees it: the jobs on it, each with its own wall-clock
 * deadline, and the thread's end. A deadline that passes terminates the thread (the only way to
 * stop a decoder spinning in synchronous code); every other job on it learns it was collateral.
 * The old-generation cap is the thread's `resourceLimits`: V8 ends a thread over it with
 * ERR_WORKER_OUT_OF_MEMORY, which every job on it learns with whether it was alone there.
 */
export class EtlThreadHandle {
  private readonly worker: Worker;
  private readonly inFlight = new Map<number, InFlight>();
  private ready = false;
  private ended = false;
  private nextId = 0;
  private failure: { cause: 'memory' | 'crash'; message: string } | null = null;
  private readonly startTimer: NodeJS.Timeout;
  private readonly closeWaiters: (() => void)[] = [];
  /** Settles when the thread has exited (its stores' connections closed with it). */
  private readonly exited: Promise<void>;

  /** `youngGenerationMb`: the thread's young generation (a bulk job's thread has BULK_THREAD_YOUNG_GENERATION_MB). */
  constructor(config: Config, parsersModule?: string, youngGenerationMb = THREAD_YOUNG_GENERATION_MB) {
    const workerData: EtlThreadData = { config, ...(parsersModule ? { parsersModule } : {}) };
    this.worker = startWorker(siblingModule(import.meta.url, 'etlThread'), {
      workerData,
      loadsTypeScript: parsersModule !== undefined,
      // Parsers stream: a job needs little heap, and the cap is the attempt's memory bound (contracts §18).
      resourceLimits: { maxOldGenerationSizeMb: config.etlLimits.memoryMb, maxYoungGenerationSizeMb: youngGenerationMb },
    });
    this.worker.unref();
    this.worker.on('message', (m: EtlThreadReply) => this.onReply(m));
    this.worker.on('error', (err: Error & { code?: string }) => {
      this.failure ??= err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? { cause: 'memory', message: err.message } : { cause: 'crash', message: err.message };
    });
    this.worker.on('exit', (code) => this.onExit(code));
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.startTimer = setTimeout(() => this.died({ cause: 'crash', message: `the ETL thread did not start within ${START_WAIT_MS / 1000} s` }), START_WAIT_MS).unref();
  }

  /** Jobs on this thread now. */
  get load(): number {
    return this.inFlight.size;
  }

  /** False once the thread ended (or is being ended): it takes no more jobs. */
  get alive(): boolean {
    return !this.ended;
  }

  /** Runs a job here; its deadline runs from when the thread is ready. Never rejects. */
  run(task: EtlTask, deadlineMs: number): Promise<ThreadRunResult> {
    if (this.ended) return Promise.resolve({ kind: 'collateral' });
    return new Promise((settle) => {
      const job: InFlight = { id: this.nextId++, task, deadlineMs, timer: null, settle };
      this.inFlight.set(job.id, job);
      this.worker.ref();
      if (this.ready) this.send(job);
    });
  }

  /** Asks the thread to close its stores, then ends it. Jobs still on it are told they were collateral. */
  async close(): Promise<void> {
    if (!this.ended) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, CLOSE_WAIT_MS).unref();
        this.closeWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
        // Held until it answers: a process whose last work is this close waits for the stores to close.
        this.worker.ref();
        this.worker.postMessage({ type: 'close' } satisfies EtlThreadRequest);
      });
      this.end();
    }
    // Until the thread has exited, its connections may still write the data directory (a test's
    // teardown met the record ledger's log files there after the service closed). Bounded: a
    // decoder stuck in native code ends only when that call returns.
    await Promise.race([this.exited, new Promise<void>((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
  }

  private send(job: InFlight): void {
    job.timer = setTimeout(() => this.deadlinePassed(job), job.deadlineMs).unref();
    this.worker.postMessage({ type: 'run', id: job.id, task: job.task } satisfies EtlThreadRequest);
  }

  private onReply(m: EtlThreadReply): void {
    if (m.type === 'ready') {
      this.ready = true;
      clearTimeout(this.startTimer);
      for (const job of this.inFlight.values()) this.send(job);
      return;
    }
    if (m.type === 'closed') {
      for (const l of this.closeWaiters.splice(0)) l();
      return;
    }
    const job = this.inFlight.get(m.id);
    if (!job) return;
    this.finish(job, m.type === 'done' ? { kind: 'outcome', outcome: m.outcome } : { kind: 'error', message: m.message, transient: m.transient });
  }

  private deadlinePassed(culprit: InFlight): void {
    if (this.ended || !this.inFlight.has(culprit.id)) return;
    this.finish(culprit, { kind: 'stopped', alone: this.inFlight.size === 1 });
    this.end();
  }

  private onExit(code: number): void {
    this.died(this.failure ?? { cause: 'crash', message: `the ETL thread exited with code ${code}` });
  }

  /** The thread ended (or is ended) by no deadline: each job on it learns why, and whether it was alone there. */
  private died(failure: { cause: 'memory' | 'crash'; message: string }): void {
    if (this.ended) return;
    const alone = this.inFlight.size === 1;
    for (const job of [...this.inFlight.values()]) this.finish(job, { kind: 'died', ...failure, alone });
    this.end();
  }

  private finish(job: InFlight, result: ThreadRunResult): void {
    if (job.timer) clearTimeout(job.timer);
    this.inFlight.delete(job.id);
    if (this.inFlight.size === 0) this.worker.unref();
    job.settle(result);
  }

  /**
   * Ends the thread at once: terminate interrupts JavaScript however busy; a decoder stuck in
   * native code ends when that call returns. Nothing waits for that: the jobs are answered now.
   */
  private end(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.startTimer);
    for (const job of [...this.inFlight.values()]) this.finish(job, { kind: 'collateral' });
    void this.worker.terminate().catch(() => {});
    for (const l of this.closeWaiters.splice(0)) l();
  }
}
