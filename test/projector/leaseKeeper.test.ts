import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { LeaseKeeper, type LeaseSettings } from '../../src/projector/leaseKeeper.js';
import { defineReactor, ReactorRuntime } from '../../src/projector/reactor.js';
import type { LeaseStore } from '../../src/readstore/leases.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';

/**
 * Issue 14: one holder per piece of work across processes. Two keepers (as two processes) on one
 * store; a "crash" is a keeper whose store stops answering, so it can neither renew nor release.
 * Leases of 300 ms, renewed every 100 ms; every wait is for a condition.
 */
const LEASE_MS = 300;
const RENEW_MS = 100;

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A lease store that can be cut off, as a crashed process is. */
function severable(store: LeaseStore): LeaseStore & { sever: () => void } {
  let cut = false;
  const guard =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      if (cut) throw new Error('process is gone');
      return f(...a);
    };
  return {
    acquire: guard(store.acquire.bind(store)),
    renew: guard(store.renew.bind(store)),
    release: guard(store.release.bind(store)),
    remove: guard(store.remove.bind(store)),
    get: guard(store.get.bind(store)),
    sever: () => (cut = true),
  };
}

const settings = (store: LeaseStore, holder: string): LeaseSettings => ({ store, holder, leaseMs: LEASE_MS, renewMs: RENEW_MS });

describe('LeaseKeeper', () => {
  it('runs the work in one keeper only; when that one stops answering, the other takes over in a higher generation after the lease ran out', async () => {
    const readStore = new SqliteReadStore({ path: ':memory:' });
    const storeA = severable(readStore.leases());
    const running: string[] = [];
    const fences: number[] = [];
    const work = (who: string) => ({
      start: (fence: { generation: number }) => {
        running.push(who);
        fences.push(fence.generation);
      },
      stop: () => {
        running.splice(running.indexOf(who), 1);
      },
    });
    const a = new LeaseKeeper(settings(storeA, 'proc-a'));
    a.hold('job', work('a'));
    await a.start();
    const b = new LeaseKeeper(settings(readStore.leases(), 'proc-b'));
    b.hold('job', work('b'));
    await b.start();
    expect(running).toEqual(['a']);
    storeA.sever();
    // The cut-off holder stops its own work once its lease has run out; the other takes it.
    await until(() => running.length === 1 && running[0] === 'b');
    expect(fences).toEqual([1, 2]);
    await b.stop();
    await a.stop();
    await readStore.close();
  });

  it('hands the work on at once when its holder stops cleanly (the lease is released)', async () => {
    const readStore = new SqliteReadStore({ path: ':memory:' });
    const started: string[] = [];
    const a = new LeaseKeeper(settings(readStore.leases(), 'proc-a'));
    const b = new LeaseKeeper(settings(readStore.leases(), 'proc-b'));
    a.hold('job', { start: () => void started.push('a'), stop: () => {} });
    b.hold('job', { start: () => void started.push('b'), stop: () => {} });
    await a.start();
    await b.start();
    await a.stop();
    await until(() => started.includes('b'));
    expect(started).toEqual(['a', 'b']);
    expect((await readStore.leases().get('job'))?.generation).toBe(2);
    await b.stop();
    await readStore.close();
  });
});

describe('reactors under leases', () => {
  it('handle each event in one process; after the holder is cut off the other resumes from the checkpoint, which only moves forward', async () => {
    const eventStore = new SqliteEventStore({ path: ':memory:' });
    const readStore = new SqliteReadStore({ path: ':memory:' });
    const handled: { who: string; position: number }[] = [];
    const reactor = (who: string) =>
      defineReactor({
        name: 'counter',
        eventTypes: ['Ping'],
        handle: async (e) => void handled.push({ who, position: e.globalPosition }),
      });
    const storeA = severable(readStore.leases());
    const a = new ReactorRuntime(eventStore, readStore, [reactor('a')], undefined, settings(storeA, 'proc-a'));
    const b = new ReactorRuntime(eventStore, readStore, [reactor('b')], undefined, settings(readStore.leases(), 'proc-b'));
    await a.start();
    await b.start();
    for (let i = 0; i < 5; i++) await eventStore.appendToStream('pings', [{ type: 'Ping', data: { i } }]);
    await until(async () => (await readStore.getCheckpoint('reactor:counter'))?.position === 5);
    expect(handled.map((h) => h.who)).toEqual(['a', 'a', 'a', 'a', 'a']);
    storeA.sever();
    await until(async () => (await readStore.leases().get('reactor:counter'))?.holder === 'proc-b');
    for (let i = 5; i < 8; i++) await eventStore.appendToStream('pings', [{ type: 'Ping', data: { i } }]);
    await until(async () => (await readStore.getCheckpoint('reactor:counter'))?.position === 8);
    // The new holder handled every later event (the cut-off one may have tried one more, but its
    // checkpoint write was refused by the fence).
    expect(handled.filter((h) => h.who === 'b').map((h) => h.position)).toEqual([6, 7, 8]);
    // At least once, in order: nothing skipped.
    expect([...new Set(handled.map((h) => h.position))]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    await a.stop();
    await b.stop();
    await eventStore.close();
    await readStore.close();
  });
});
