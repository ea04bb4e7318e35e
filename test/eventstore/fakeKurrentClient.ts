import { PassThrough } from 'node:stream';
import type { AllStreamRecordedEvent, AllStreamResolvedEvent, AllStreamSubscription, AppendResult, MultiAppendResult } from '@kurrent/kurrentdb-client';
import type { HttpAnswer } from '../../src/eventstore/kurrentDBAdmin.js';
import type { KurrentDBNode } from '../../src/eventstore/kurrentDBConnection.js';
import type { KurrentClient } from '../../src/eventstore/kurrentDBEventStore.js';

/**
 * A stand-in for the KurrentDB client and for the nodes' HTTP endpoints: it records every call
 * the adapter makes, with its arguments, and answers from queues the test fills. Only the
 * client's public types are used.
 */
export type Call = { method: string; args: unknown[] };
type Answer<T> = T | Error | ((...args: unknown[]) => T);

export class FakeKurrent {
  readonly calls: Call[] = [];
  readonly http: { node: string; method: string; path: string }[] = [];
  /** Each readAll/readStream call takes the next page (or throws the error). */
  readonly reads: Answer<AllStreamResolvedEvent[]>[] = [];
  readonly appends: Answer<AppendResult>[] = [];
  readonly multiAppends: Answer<MultiAppendResult>[] = [];
  readonly deletes: Answer<object>[] = [];
  readonly subscriptions: FakeSubscription[] = [];
  /** `${host}:${port} ${method} ${path}` or `${method} ${path}` → answers, in turn (the last one repeats). */
  readonly routes = new Map<string, HttpAnswer[]>();
  disposed = false;

  readonly client: KurrentClient = {
    appendToStream: (async (...args: unknown[]) => this.answer('appendToStream', args, this.appends)) as KurrentClient['appendToStream'],
    multiStreamAppend: (async (...args: unknown[]) => this.answer('multiStreamAppend', args, this.multiAppends)) as KurrentClient['multiStreamAppend'],
    readStream: ((...args: unknown[]) => this.iterate('readStream', args)) as KurrentClient['readStream'],
    readAll: ((...args: unknown[]) => this.iterate('readAll', args)) as KurrentClient['readAll'],
    subscribeToAll: ((...args: unknown[]) => {
      this.calls.push({ method: 'subscribeToAll', args });
      const sub = new FakeSubscription();
      this.subscriptions.push(sub);
      return sub as unknown as AllStreamSubscription;
    }) as KurrentClient['subscribeToAll'],
    deleteStream: (async (...args: unknown[]) => this.answer('deleteStream', args, this.deletes)) as KurrentClient['deleteStream'],
    tombstoneStream: (async (...args: unknown[]) => this.answer('tombstoneStream', args, this.deletes)) as KurrentClient['tombstoneStream'],
    dispose: async () => {
      this.disposed = true;
    },
  };

  readonly httpCall = async (node: KurrentDBNode, method: 'GET' | 'POST', path: string): Promise<HttpAnswer> => {
    this.http.push({ node: `${node.host}:${node.port}`, method, path });
    const answers = this.routes.get(`${node.host}:${node.port} ${method} ${path}`) ?? this.routes.get(`${method} ${path}`);
    if (!answers?.length) return { status: 404, body: '' };
    return answers.length > 1 ? answers.shift()! : answers[0]!;
  };

  callsOf(method: string): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  private answer<T>(method: string, args: unknown[], queue: Answer<T>[]): T {
    this.calls.push({ method, args });
    const next = queue.shift();
    if (next === undefined) throw new Error(`${method}: no answer queued`);
    if (next instanceof Error) throw next;
    return typeof next === 'function' ? (next as (...a: unknown[]) => T)(...args) : next;
  }

  private iterate(method: string, args: unknown[]): AsyncIterableIterator<AllStreamResolvedEvent> {
    const self = this;
    self.calls.push({ method, args });
    const next = self.reads.shift() ?? [];
    return (async function* () {
      if (next instanceof Error) throw next;
      yield* typeof next === 'function' ? next(...args) : next;
    })();
  }
}

/** A subscription the test drives: `push` events, `fail` with an error, `end` it. */
export class FakeSubscription extends PassThrough {
  unsubscribed = false;
  constructor() {
    super({ objectMode: true });
  }
  async unsubscribe(): Promise<void> {
    this.unsubscribed = true;
    this.destroy();
  }
  push_(...events: AllStreamResolvedEvent[]): void {
    for (const e of events) this.write(e);
  }
  fail(err: Error): void {
    this.destroy(err);
  }
}

/** A recorded event as the client hands it over (position = commit = prepare). */
export function recorded(position: number, streamId: string, type: string, data: Record<string, unknown>, revision = 0, id?: string): AllStreamResolvedEvent {
  const event = {
    streamId,
    id: id ?? `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`,
    revision: BigInt(revision),
    type,
    data,
    metadata: undefined,
    isJson: true,
    created: new Date('2026-01-01T00:00:00Z'),
    position: { commit: BigInt(position), prepare: BigInt(position) },
  } as unknown as AllStreamRecordedEvent;
  return { event };
}

/** An error as the client throws it: its kind in `type`. */
export function clientError(type: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(type), { type, ...fields });
}
