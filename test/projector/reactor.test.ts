import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { defineReactor, REACTOR_ATTEMPTS, ReactorRuntime } from '../../src/projector/reactor.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import type { ReadStore } from '../../src/readstore/readStore.js';

/**
 * A reactor is delivered every event of its types at least once, in order, from its checkpoint
 * (src/projector/reactor.ts). The embedded store hands a new subscription the events already
 * after the checkpoint synchronously, inside `subscribe()`: a runtime that registered the run only
 * after subscribing dropped the first of them and then moved its checkpoint past it with the
 * next one (the job feeder's lost upload in the multi-process test). Every wait is for a
 * condition; none of these tests depends on timing.
 */

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 10));
  }
}

function stores() {
  return { eventStore: new SqliteEventStore({ path: ':memory:' }), readStore: new SqliteReadStore({ path: ':memory:' }) };
}

const ping = (i: number) => ({ type: 'Ping', data: { i } });

/**
 * A runtime (pauses of 1 ms, no dead letters) of one reactor whose handler fails on the event at
 * `position` REACTOR_ATTEMPTS times and then handles it; `seen` counts the failures and lists the
 * positions handled.
 */
function flaky(eventStore: SqliteEventStore, readStore: ReadStore, name: string, position: number, together?: number) {
  const seen = { failures: 0, handled: [] as number[] };
  const reactor = defineReactor({
    name,
    eventTypes: ['Ping'],
    together,
    handle: async (e: RecordedEvent) => {
      if (e.globalPosition === position && seen.failures < REACTOR_ATTEMPTS) {
        seen.failures++;
        throw new Error('not yet');
      }
      seen.handled.push(e.globalPosition);
    },
  });
  return { runtime: new ReactorRuntime(eventStore, readStore, [reactor], undefined, undefined, undefined, 1), seen };
}

describe('ReactorRuntime delivery from its checkpoint', () => {
  it('handles every event already appended when it starts, the first one included (nothing skipped at start)', async () => {
    const { eventStore, readStore } = stores();
    for (let i = 1; i <= 3; i++) await eventStore.appendToStream('pings', [ping(i)]);
    const handled: number[] = [];
    const runtime = new ReactorRuntime(eventStore, readStore, [
      defineReactor({ name: 'counter', eventTypes: ['Ping'], handle: async (e: RecordedEvent) => void handled.push(e.globalPosition) }),
    ]);
    await runtime.start();
    await until(async () => (await readStore.getCheckpoint('reactor:counter'))?.position === 3);
    expect(handled).toEqual([1, 2, 3]);
    await runtime.stop();
    await eventStore.close();
    await readStore.close();
  });

  it('resumes after a restart with the first event past its checkpoint (a new holder of the lease takes over mid-log)', async () => {
    const { eventStore, readStore } = stores();
    const handled: { run: string; position: number }[] = [];
    const reactor = (run: string) =>
      defineReactor({ name: 'counter', eventTypes: ['Ping'], handle: async (e: RecordedEvent) => void handled.push({ run, position: e.globalPosition }) });
    const first = new ReactorRuntime(eventStore, readStore, [reactor('first')]);
    await first.start();
    await eventStore.appendToStream('pings', [ping(1)]);
    await until(async () => (await readStore.getCheckpoint('reactor:counter'))?.position === 1);
    await first.stop();
    // Appended while no process runs the reactor (its holder was killed; the lease not yet taken over).
    for (let i = 2; i <= 4; i++) await eventStore.appendToStream('pings', [ping(i)]);
    const second = new ReactorRuntime(eventStore, readStore, [reactor('second')]);
    await second.start();
    await until(async () => (await readStore.getCheckpoint('reactor:counter'))?.position === 4);
    expect(handled).toEqual([
      { run: 'first', position: 1 },
      { run: 'second', position: 2 },
      { run: 'second', position: 3 },
      { run: 'second', position: 4 },
    ]);
    await second.stop();
    await eventStore.close();
    await readStore.close();
  });

  it('handles the one pending event it starts with before any later one moves the checkpoint', async () => {
    const { eventStore, readStore } = stores();
    await eventStore.appendToStream('pings', [ping(1)]);
    const handled: number[] = [];
    const runtime = new ReactorRuntime(eventStore, readStore, [
      defineReactor({ name: 'counter', eventTypes: ['Ping'], handle: async (e: RecordedEvent) => void handled.push(e.globalPosition) }),
    ]);
    await runtime.start();
    await eventStore.appendToStream('pings', [ping(2)]);
    await until(async () => (await readStore.getCheckpoint('reactor:counter'))?.position === 2);
    expect(handled).toEqual([1, 2]);
    await runtime.stop();
    await eventStore.close();
    await readStore.close();
  });

  it('after a handler failed REACTOR_ATTEMPTS times (no dead letters), restarts from its checkpoint and handles that event again before the next', async () => {
    const { eventStore, readStore } = stores();
    const { runtime, seen } = flaky(eventStore, readStore, 'flaky', 1);
    await runtime.start();
    // Appended while it runs: the failures come live, and the restart finds event 1 after its checkpoint.
    await eventStore.appendToStream('pings', [ping(1)]);
    await eventStore.appendToStream('pings', [ping(2)]);
    await until(async () => (await readStore.getCheckpoint('reactor:flaky'))?.position === 2);
    expect(seen.failures).toBe(REACTOR_ATTEMPTS);
    expect(seen.handled).toEqual([1, 2]);
    await runtime.stop();
    await eventStore.close();
    await readStore.close();
  });
});

describe('ReactorRuntime: events handled together (Reactor.together)', () => {
  /** The read store, counting the checkpoint writes of one reactor. */
  function counting(readStore: SqliteReadStore, projection: string) {
    const writes = { n: 0 };
    const counted = new Proxy(readStore, {
      get(target, prop, receiver) {
        if (prop === 'applyBatch') return (batch: { projection: string }) => (batch.projection === projection && writes.n++, target.applyBatch(batch as never));
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    return { counted, writes };
  }

  it('starts the handlers of every event waiting (up to `together`) before any of them finished, and moves the checkpoint once, past the last', async () => {
    const { eventStore, readStore } = stores();
    for (let i = 1; i <= 5; i++) await eventStore.appendToStream('pings', [ping(i)]);
    const started: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { counted, writes } = counting(readStore, 'reactor:together');
    const runtime = new ReactorRuntime(eventStore, counted, [
      defineReactor({
        name: 'together',
        eventTypes: ['Ping'],
        together: 4,
        handle: async (e: RecordedEvent) => {
          started.push(e.globalPosition);
          await gate;
        },
      }),
    ]);
    await runtime.start();
    // One at a time, the second would wait for the first, which waits for the gate.
    await until(() => started.length === 4);
    expect(started).toEqual([1, 2, 3, 4]);
    expect(await readStore.getCheckpoint('reactor:together')).toBeNull();
    release();
    await until(async () => (await readStore.getCheckpoint('reactor:together'))?.position === 5);
    expect(started).toEqual([1, 2, 3, 4, 5]);
    // Past 4 for the first four together, past 5 for the last.
    expect(writes.n).toBe(2);
    await runtime.stop();
    await eventStore.close();
    await readStore.close();
  });

  it('an event of a batch that kept failing (no dead letters) leaves the checkpoint before the batch: after the restart every event of it is handled again, in order', async () => {
    const { eventStore, readStore } = stores();
    for (let i = 1; i <= 3; i++) await eventStore.appendToStream('pings', [ping(i)]);
    const { runtime, seen } = flaky(eventStore, readStore, 'flaky-together', 2, 10);
    await runtime.start();
    await until(async () => (await readStore.getCheckpoint('reactor:flaky-together'))?.position === 3);
    expect(seen.failures).toBe(REACTOR_ATTEMPTS);
    // The first run handled 1 and 3 (2 kept failing) and never moved the checkpoint; the second all three.
    expect(seen.handled).toEqual([1, 3, 1, 2, 3]);
    await runtime.stop();
    await eventStore.close();
    await readStore.close();
  });
});

describe('ReactorRuntime and store failures (contracts §19)', () => {
  it('contracts §19: a handler failing with SQLITE_BUSY many times more than REACTOR_ATTEMPTS is retried until the store answers, and the event is never dead-lettered', async () => {
    const { eventStore, readStore } = stores();
    let failures = 0;
    const handled: number[] = [];
    const deadLettered: number[] = [];
    const runtime = new ReactorRuntime(
      eventStore,
      readStore,
      [
        defineReactor({
          name: 'busy',
          eventTypes: ['Ping'],
          handle: async (e: RecordedEvent) => {
            if (e.globalPosition === 1 && failures < REACTOR_ATTEMPTS * 4) {
              failures++;
              throw Object.assign(new Error('database is locked'), { name: 'SqliteError', code: 'SQLITE_BUSY' });
            }
            handled.push(e.globalPosition);
          },
        }),
      ],
      undefined,
      undefined,
      async (_r, e) => void deadLettered.push(e.globalPosition),
      1,
      { firstMs: 1, maxMs: 2 },
    );
    await runtime.start();
    await eventStore.appendToStream('pings', [ping(1)]);
    await eventStore.appendToStream('pings', [ping(2)]);
    await until(async () => (await readStore.getCheckpoint('reactor:busy'))?.position === 2);
    expect(failures).toBe(REACTOR_ATTEMPTS * 4);
    expect(deadLettered).toEqual([]);
    expect(handled).toEqual([1, 2]);
    await runtime.stop();
    await eventStore.close();
    await readStore.close();
  });
});
