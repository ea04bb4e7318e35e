import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Config } from '../../config.js';
import { THREAD_YOUNG_GENERATION_MB, siblingModule, threadEntry } from '../../shared/workerThreads.js';
import type { EtlRunOutcome, EtlTask } from './etlTask.js';

/** What a pool thread (`etlThread.ts`) is started with, and the words pool and threads exchange to close the stores. */
export type EtlThreadData = { config: Config; control: string };
export type EtlControlMessage = 'close' | 'closed';

/** Runs claimed ETL jobs somewhere; `close` releases whatever that took. */
export interface EtlRunner {
  run(task: EtlTask): Promise<EtlRunOutcome>;
  close(): Promise<void>;
}

/** Old-generation heap of an ETL thread (payload buffers live outside it). */
const ETL_THREAD_HEAP_MB = 192;

/**
 * Jobs of the small lane one ETL thread runs at once. A small job spends most of its time waiting
 * for durable writes (its start, its records, its outcome, the queue's claim and completion), so
 * several in flight share those fsyncs (each store commits what arrives together in one write)
 * instead of queueing one behind another.
 */
export const SMALL_JOBS_PER_THREAD = 4;

/** How long `close` waits for the threads to close their stores before ending them anyway. */
const CLOSE_WAIT_MS = 5_000;

/**
 * ETL jobs on worker threads (piscina): `config.etlConcurrency` threads, each with its own
 * connections to the stores (`etlThread.ts`). Started at the first job, so a process that never
 * runs one (the CLI) starts no thread.
 */
export class EtlThreadPool implements EtlRunner {
  private pool: Piscina<EtlTask, EtlRunOutcome> | null = null;
  private control: { channel: BroadcastChannel; closed: number; onClosed: () => void } | null = null;

  constructor(private readonly config: Config) {}

  run(task: EtlTask): Promise<EtlRunOutcome> {
    return (this.pool ??= this.startPool()).run(task);
  }

  async close(): Promise<void> {
    const pool = this.pool;
    const control = this.control;
    if (!pool || !control) return;
    this.pool = null;
    this.control = null;
    // Every live thread answers, once its stores are closed (a thread that died is no longer counted).
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_WAIT_MS);
      control.onClosed = () => {
        if (control.closed < pool.threads.length) return;
        clearTimeout(timer);
        resolve();
      };
      control.channel.postMessage('close' satisfies EtlControlMessage);
    });
    control.channel.close();
    await pool.destroy();
  }

  private startPool(): Piscina<EtlTask, EtlRunOutcome> {
    const name = `wellstream-etl-control:${randomUUID()}`;
    const control = { channel: new BroadcastChannel(name), closed: 0, onClosed: () => {} };
    control.channel.onmessage = (m) => {
      if ((m as { data: EtlControlMessage }).data !== 'closed') return;
      control.closed++;
      control.onClosed();
    };
    control.channel.unref();
    this.control = control;
    const threads = this.config.etlConcurrency;
    const { filename, entry } = threadEntry(siblingModule(import.meta.url, 'etlThread'));
    const workerData: EtlThreadData & { entry: string } = { config: this.config, control: name, entry };
    return new Piscina({
      filename,
      workerData,
      minThreads: threads,
      maxThreads: threads,
      // Each thread runs the jobs of both lanes interleaved (etlWorker.ts, SMALL_JOBS_PER_THREAD).
      concurrentTasksPerWorker: SMALL_JOBS_PER_THREAD + 1,
      // Idle threads wait in their event loop (not in Atomics.wait), so they hear `close`.
      atomics: 'disabled',
      // Parsers stream: a thread needs little heap, and a cap makes V8 collect instead of growing.
      resourceLimits: { maxOldGenerationSizeMb: ETL_THREAD_HEAP_MB, maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
    });
  }
}
