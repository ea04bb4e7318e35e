import { Observable, Subject } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventStore, RecordedEvent } from '../../src/eventstore/eventStore.js';
import { defineProjection } from '../../src/projector/projection.js';
import { ProjectorRuntime } from '../../src/projector/projectorRuntime.js';
import type { ApplyBatch } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';

/**
 * Issue 14, the embedded projector: a runner that resubscribed after a subscription error kept
 * what it had buffered and could end up with two live subscriptions, so events were applied twice
 * and a batch could end before its checkpoint. A resubscription must start from the stored
 * checkpoint with an empty buffer, and a checkpoint must never move backwards.
 */

/** Subscriptions the test feeds by hand; it knows which ones the runner still listens to. */
class HandFedStore {
  readonly subs: { subject: Subject<RecordedEvent>; open: boolean }[] = [];
  subscribeToAll(): Observable<RecordedEvent> {
    const entry = { subject: new Subject<RecordedEvent>(), open: true };
    this.subs.push(entry);
    return new Observable<RecordedEvent>((subscriber) => {
      const s = entry.subject.subscribe(subscriber);
      return () => {
        entry.open = false;
        s.unsubscribe();
      };
    });
  }
  open() {
    return this.subs.filter((s) => s.open);
  }
  async readAll() {
    return [];
  }
  async headPosition() {
    return 0;
  }
}

const tick = (position: number): RecordedEvent =>
  ({ id: `e${position}`, type: 'Tick', data: {}, metadata: {}, streamName: 'ticks', streamRevision: position - 1, globalPosition: position, createdAt: new Date(0) }) as RecordedEvent;

const counted = defineProjection({
  name: 'counted',
  collections: [{ name: 'tick_counts' }],
  eventTypes: ['Tick'],
  evolve: () => [{ op: 'update', collection: 'tick_counts', id: 'all', inc: { n: 1 }, upsert: true }],
});

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (await condition()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error('condition never held');
}

afterEach(() => vi.useRealTimers());

describe('projection runner: restart after a subscription error', () => {
  it('resubscribes from the stored checkpoint with an empty buffer: no event applied twice, positions only forward', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const events = new HandFedStore();
    const readStore = new SqliteReadStore({ path: ':memory:' });
    const applied: number[] = [];
    let gate: { reject: (e: Error) => void } | null = null;
    let gated = true;
    const apply = readStore.applyBatch.bind(readStore);
    readStore.applyBatch = async (batch: ApplyBatch) => {
      if (gated) {
        gated = false;
        // The first batch hangs until the test fails it (a transient store error).
        await new Promise<void>((_, reject) => (gate = { reject }));
      }
      await apply(batch);
      applied.push(batch.position);
    };
    const runtime = new ProjectorRuntime(events as unknown as EventStore, readStore, [counted]);
    await runtime.start();
    const [first] = events.subs;
    for (const p of [1, 2, 3]) first!.subject.next(tick(p));
    await until(() => gate !== null);
    first!.subject.error(new Error('connection reset'));
    // The runner resubscribes after a pause, while its first batch is still under way...
    vi.advanceTimersByTime(1000);
    await until(() => true);
    // ...and that batch then fails.
    gate!.reject(new Error('disk I/O error'));
    await until(() => events.open().length === 1 && events.subs.length >= 2);
    for (const s of events.open()) for (const p of [1, 2, 3]) s.subject.next(tick(p));
    await until(async () => (await readStore.getCheckpoint('counted'))?.position === 3);
    // Any later restart the failure scheduled has its turn here.
    vi.advanceTimersByTime(5000);
    await until(() => true);
    for (let i = 0; i < 100; i++) await new Promise((r) => setImmediate(r));
    for (const s of events.open()) s.subject.next(tick(4));
    await until(async () => (await readStore.getCheckpoint('counted'))?.position === 4);
    for (let i = 0; i < 100; i++) await new Promise((r) => setImmediate(r));

    expect(events.open()).toHaveLength(1);
    expect((await readStore.get<{ _id: string; n: number }>('tick_counts', 'all'))?.n).toBe(4);
    expect(applied).toEqual([...applied].sort((a, b) => a - b));
    await runtime.stop();
    await readStore.close();
  });

  it('drops a repeated delivery at or before what it already buffered', async () => {
    const events = new HandFedStore();
    const readStore = new SqliteReadStore({ path: ':memory:' });
    const runtime = new ProjectorRuntime(events as unknown as EventStore, readStore, [counted]);
    await runtime.start();
    const [sub] = events.subs;
    for (const p of [1, 2, 2, 1, 3]) sub!.subject.next(tick(p));
    await until(async () => (await readStore.getCheckpoint('counted'))?.position === 3);
    expect((await readStore.get<{ _id: string; n: number }>('tick_counts', 'all'))?.n).toBe(3);
    await runtime.stop();
    await readStore.close();
  });
});
