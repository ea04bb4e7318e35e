import type { Worker } from 'node:worker_threads';
import { THREAD_YOUNG_GENERATION_MB, startWorker } from './workerThreads.js';

export type StoreCall = { id: number; method: string; args: unknown[] };

/**
 * What the calling thread sends a store thread (storeThreadServer.ts): the calls made in one turn
 * of its event loop go in one message, in order.
 */
export type StoreThreadRequest = { type: 'calls'; calls: StoreCall[] } | { type: 'close' };

/** An error as it crosses between threads: structured cloning keeps neither its class nor its own fields. */
export type SentError = { name: string; message: string; stack?: string; fields: Record<string, unknown> };

export type StoreAnswer = { id: number; value: unknown } | { id: number; error: SentError };

/** What a store thread answers: the answers of one turn of its event loop (a group commit's) in one message. */
export type StoreThreadReply = { type: 'ready' } | { type: 'answers'; answers: StoreAnswer[] } | { type: 'closed' };

/** An error class callers test with `instanceof`: rebuilt as itself when a store thread throws it. */
export type ErrorClass = abstract new (...args: never[]) => Error;

type Pending = { resolve: (value: unknown) => void; reject: (err: unknown) => void };

/** JavaScript's own error classes (a store's refusal of bad input is a RangeError or TypeError). */
const BUILT_IN_ERRORS: readonly ErrorClass[] = [RangeError, TypeError, SyntaxError, ReferenceError, EvalError, URIError];

/** How long a closing thread may take to finish its calls and close its store before it is ended. */
const CLOSE_WAIT_MS = 15_000;

/**
 * A store constructed on a worker thread of its own and called from this one (issue 37): its
 * synchronous disk work (better-sqlite3 commits and their fsyncs) then never holds up the thread
 * that answers HTTP. Calls are forwarded as (method, arguments) messages, in the order they are
 * made, so the store's group commit gathers the calls that arrive together as it does in-thread;
 * a call is answered once the store answered it (a write: once its group is durable), and an
 * error comes back as the class the caller tests with `instanceof` (those named at the start;
 * others as an `Error` keeping their name and fields such as SQLite's `code`).
 *
 * A thread that dies fails every call it had (whether the store did it is then unknown, as after a
 * crash of the process), and the next call starts another one. Closing answers the calls already
 * made, closes the store, and ends the thread.
 */
export class StoreThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  /**
   * Calls made in this turn of the event loop (every request it read), posted together at its
   * end: on two cores, each message that wakes the store thread costs the caller a context switch.
   */
  private outbox: StoreCall[] = [];
  private closing: Promise<void> | null = null;
  private readonly errorClasses: Map<string, ErrorClass>;

  private constructor(
    private readonly entry: URL,
    private readonly options: unknown,
    errorClasses: readonly ErrorClass[],
    private readonly name: string,
  ) {
    this.errorClasses = new Map([...BUILT_IN_ERRORS, ...errorClasses].map((c) => [c.name, c]));
  }

  /**
   * Starts the thread of `entry` (a module that calls `serveStore`), whose store is constructed
   * from `options` (plain data); resolves once it is open, rejects as its opening failed.
   */
  static async start(entry: URL, options: unknown, settings: { name: string; errors: readonly ErrorClass[] }): Promise<StoreThread> {
    const thread = new StoreThread(entry, options, settings.errors, settings.name);
    const worker = thread.spawn();
    await new Promise<void>((resolve, reject) => {
      const ready = (m: StoreThreadReply) => m.type === 'ready' && settle(resolve);
      const failed = (err: Error) => settle(() => reject(err));
      const exited = (code: number) => settle(() => reject(new Error(`the ${settings.name} thread exited with code ${code} while opening its store`)));
      const settle = (then: () => void) => {
        worker.off('message', ready).off('error', failed).off('exit', exited);
        then();
      };
      worker.on('message', ready).once('error', failed).once('exit', exited);
    });
    return thread;
  }

  /** Calls `method` of the thread's store with `args` (plain data). */
  call<T>(method: string, args: readonly unknown[]): Promise<T> {
    if (this.closing) return Promise.reject(new Error(`the ${this.name} thread is closed`));
    const worker = this.worker ?? this.spawn();
    return new Promise<T>((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      if (this.pending.size === 1) worker.ref();
      this.outbox.push({ id, method, args: [...args] });
      if (this.outbox.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    if (this.outbox.length === 0) return;
    this.worker?.postMessage({ type: 'calls', calls: this.outbox } satisfies StoreThreadRequest);
    this.outbox = [];
  }

  /** Answers the calls already made, closes the store and ends the thread. */
  close(): Promise<void> {
    this.closing ??= this.closeWorker();
    return this.closing;
  }

  private async closeWorker(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    // Held until it answers: a process whose last work is this close waits for the store to close.
    worker.ref();
    this.flush();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_WAIT_MS).unref();
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      worker.on('message', (m: StoreThreadReply) => m.type === 'closed' && done());
      worker.once('exit', done);
      worker.postMessage({ type: 'close' } satisfies StoreThreadRequest);
    });
    this.died(worker, 'it was closed');
    await worker.terminate();
  }

  private spawn(): Worker {
    const worker = startWorker(this.entry, { workerData: { options: this.options }, name: this.name, resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB } });
    this.worker = worker;
    // Idle, the thread must not keep the process alive; a call holds it (`call`).
    worker.unref();
    let failure = '';
    worker.on('message', (m: StoreThreadReply) => this.onReply(m));
    worker.on('error', (err) => (failure ||= `${err.name}: ${err.message}`));
    worker.once('exit', (code) => this.died(worker, failure || `it exited with code ${code}`));
    return worker;
  }

  private onReply(m: StoreThreadReply): void {
    if (m.type !== 'answers') return;
    for (const answer of m.answers) {
      const call = this.pending.get(answer.id);
      if (!call) continue;
      this.pending.delete(answer.id);
      if ('error' in answer) call.reject(this.rebuild(answer.error));
      else call.resolve(answer.value);
    }
    if (this.pending.size === 0) this.worker?.unref();
  }

  /** The thread ended: its calls fail (never hang), and the next call starts another thread. */
  private died(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = null;
    const calls = [...this.pending.values()];
    this.pending.clear();
    this.outbox = [];
    for (const call of calls) call.reject(new Error(`the ${this.name} thread ended (${why}) before it answered; the call may or may not have been done`));
  }

  private rebuild(sent: SentError): Error {
    const cls = this.errorClasses.get(sent.name);
    const err: Error = cls ? (Object.create(cls.prototype) as Error) : new Error(sent.message);
    Object.assign(err, sent.fields);
    for (const [key, value] of [['name', sent.name], ['message', sent.message], ['stack', sent.stack]] as const) {
      Object.defineProperty(err, key, { value, writable: true, configurable: true, enumerable: key === 'name' && Object.hasOwn(sent.fields, 'name') });
    }
    return err;
  }
}

/** An error as `StoreThread` rebuilds it: its name, message, stack and own fields that can be cloned. */
export function sendableError(err: unknown): SentError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err)) {
    try {
      fields[key] = structuredClone(value);
    } catch {
      // A field that cannot cross threads (a function, a handle) is left behind.
    }
  }
  return { name: err.name, message: err.message, stack: err.stack, fields };
}

/** Async methods of `T`, by name. */
export type AsyncMethodOf<T> = { [K in keyof T]: T[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof T] & string;

/** Functions that forward each of `methods` to the store on `thread`. */
export function forwarded<T, M extends AsyncMethodOf<T>>(thread: StoreThread, methods: readonly M[]): Pick<T, M> {
  const out: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const method of methods) out[method] = (...args) => thread.call(method, args);
  return out as unknown as Pick<T, M>;
}
