import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { EventStore } from '../eventstore/eventStore.js';
import type { ReadStore } from '../readstore/readStore.js';
import { storedPosition } from './storedPosition.js';
import { siblingModule, startWorker } from '../shared/workerThreads.js';
import { PositionWaiters } from './positionWaiters.js';
import type { Projection } from './projection.js';

/** Old-generation heap of the projector thread. */
const PROJECTOR_THREAD_HEAP_MB = 160;

export type ProjectorThreadMessage =
  | { kind: 'ready' }
  | { kind: 'stopped' }
  | { kind: 'position'; projection: string; position: number };

/**
 * The parent's side of the projector thread (`projectorThread.ts`): starts it, follows the
 * position each of its projections reports after every batch, and stops it. A thread that dies
 * is started again; it resumes from the stored checkpoints.
 */
export class ProjectorThread {
  private worker: Worker | null = null;
  private stopping = false;
  readonly waiters: Map<string, PositionWaiters>;

  constructor(
    private readonly config: Config,
    private readonly projections: readonly Projection[],
    eventStore: EventStore,
    private readonly log?: Logger,
    private readonly maxChangesPerBatch = 10_000,
    /**
     * Given when several processes share the stores: the thread then runs a projection only while
     * it holds its lease, and waits here follow the stored checkpoints (another process may be
     * the one applying them).
     */
    leasedOn?: ReadStore,
  ) {
    this.leased = !!leasedOn;
    this.waiters = new Map(
      projections.map((p) => [p.name, new PositionWaiters(p.name, p.eventTypes, eventStore, leasedOn ? storedPosition(leasedOn, p.name) : undefined)]),
    );
  }

  private readonly leased: boolean;

  async start(): Promise<void> {
    this.stopping = false;
    const worker = startWorker(siblingModule(import.meta.url, 'projectorThread'), {
      workerData: { config: this.config, names: this.projections.map((p) => p.name), maxChangesPerBatch: this.maxChangesPerBatch, leased: this.leased },
      // The runners' buffers are bounded (20,000 records); a cap makes V8 collect instead of growing.
      resourceLimits: { maxOldGenerationSizeMb: PROJECTOR_THREAD_HEAP_MB },
    });
    this.worker = worker;
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (m: ProjectorThreadMessage) => {
        if (m.kind === 'position') this.waiters.get(m.projection)?.advance(m.position);
        else if (m.kind === 'ready') resolve();
      });
      worker.once('error', (err) => {
        this.log?.error({ err }, 'projector thread failed');
        reject(err);
      });
      worker.once('exit', (code) => {
        if (this.stopping || this.worker !== worker) return;
        this.log?.error({ code }, 'projector thread exited; starting it again');
        setTimeout(() => void this.start().catch(() => {}), 1000).unref();
      });
    });
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.stopping = true;
    this.worker = null;
    const stopped = new Promise<void>((resolve) => {
      worker.on('message', (m: ProjectorThreadMessage) => m.kind === 'stopped' && resolve());
      worker.once('exit', () => resolve());
    });
    worker.postMessage('stop');
    await Promise.race([stopped, new Promise((r) => setTimeout(r, 10_000).unref())]);
    await worker.terminate();
  }
}
