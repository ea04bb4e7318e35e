import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventStore, RecordedEvent } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { listDeadLetters } from '../../src/projector/deadLetters.js';
import { defineProjection, type Projection } from '../../src/projector/projection.js';
import { ProjectorRuntime } from '../../src/projector/projectorRuntime.js';
import { PROJECTION_STALLS, projectionStallsCollection, type StallDoc } from '../../src/projector/projectionStalls.js';
import type { Doc, ReadStore } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';

/**
 * Contracts §19: a projection never skips an event because its store failed for a while; only an
 * event its own code cannot apply becomes a dead letter, and an erasure event never does (the
 * projection stops on it and says why). The retry schedule of deterministic failures is 4 × 1 ms
 * here, so "longer than the schedule" is a matter of failure counts, not of time.
 */
let events: EventStore;
let inner: ReadStore;
let runtime: ProjectorRuntime | null;
let p: Projection;
let coll: string;
/** While true, every batch that writes the projection's rows fails as SQLite does under a long lock. */
let busy: boolean;
let busyFailures: number;
/** The projection's code fails on events whose data says poison, and on user.erased, while true. */
let broken: boolean;

function sqliteBusy(): Error {
  // What better-sqlite3 throws: a SqliteError whose code is the (extended) result code.
  return Object.assign(new Error('database is locked'), { name: 'SqliteError', code: 'SQLITE_BUSY' });
}

/** The read store, but its batches touching the projection's rows fail while `busy`. */
function busyWhenTold(store: ReadStore): ReadStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== 'applyBatch') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      const applyBatch: ReadStore['applyBatch'] = async (batch) => {
        if (busy && batch.changes.some((c) => c.collection === coll)) {
          busyFailures++;
          throw sqliteBusy();
        }
        return target.applyBatch(batch);
      };
      return applyBatch;
    },
  });
}

beforeEach(async () => {
  events = new SqliteEventStore({ path: ':memory:' });
  inner = new SqliteReadStore({ path: ':memory:' });
  runtime = null;
  busy = false;
  busyFailures = 0;
  broken = false;
  coll = `ticks_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  p = defineProjection({
    name: `ticks_${coll}`,
    collections: [{ name: coll }],
    eventTypes: ['Tick', 'user.erased'],
    evolve: (e: RecordedEvent) => {
      if (e.type === 'user.erased') {
        if (broken) throw new TypeError('cannot drop the user');
        return [{ op: 'deleteMany', collection: coll, filter: { user: (e.data as { user_id: string }).user_id } }];
      }
      const d = e.data as { n: number; user?: string; poison?: boolean };
      if (d.poison && broken) throw new TypeError(`cannot read tick ${d.n}`);
      return [{ op: 'put', collection: coll, doc: { _id: `t${d.n}`, n: d.n, user: d.user ?? 'u' } }];
    },
  });
});
afterEach(async () => {
  await runtime?.stop();
  await inner.close();
  await events.close();
});

const tick = async (n: number, extra: Record<string, unknown> = {}) => (await events.appendToStream(`ticks-${randomUUID()}`, [{ type: 'Tick', data: { n, ...extra } }])).lastPosition;
const erase = async (user: string) => (await events.appendToStream(`deletion-${randomUUID()}`, [{ type: 'user.erased', data: { user_id: user } }])).lastPosition;
const start = async () => {
  runtime = new ProjectorRuntime(events, busyWhenTold(inner), [p], undefined, { retry: { delaysMs: [1, 1, 1, 1] }, stallBackoff: { firstMs: 1, maxMs: 4 } });
  await runtime.start();
  return runtime;
};
const ns = async () => (await inner.find<Doc & { n: number }>(coll, {})).map((d) => d.n).sort((a, b) => a - b);
const mine = async () => (await listDeadLetters(inner, { all: true })).filter((d) => d.projection === p.name);
const statusOf = async (rt: ProjectorRuntime) => (await rt.status()).find((s) => s.name === p.name)!;

describe('projection errors are classified (contracts §19)', () => {
  it('contracts §19: a batch failing with SQLITE_BUSY far longer than the retry schedule is retried until the store answers, shows as waiting in status, and is applied with no dead letter', { timeout: 30_000 }, async () => {
    busy = true;
    const rt = await start();
    await tick(1);
    await tick(2);
    const head = await tick(3);
    // Ten failures spend the old schedule twice over (five for the batch, five for its first event alone).
    await vi.waitFor(
      async () => {
        expect(busyFailures).toBeGreaterThanOrEqual(40);
        expect((await statusOf(rt)).stall).toMatchObject({ state: 'waiting', kind: 'busy', error: 'SqliteError: database is locked' });
      },
      { timeout: 20_000, interval: 5 },
    );
    expect(await mine()).toEqual([]);
    expect((await inner.getCheckpoint(p.name))?.position ?? 0).toBe(0);

    busy = false;
    await rt.waitForIdle(head, 20_000);
    expect(await ns()).toEqual([1, 2, 3]);
    expect(await mine()).toEqual([]);
    await vi.waitFor(async () => expect((await statusOf(rt)).stall).toBeNull(), { timeout: 5000, interval: 5 });
  });

  it('contracts §19: an event its own code fails on every attempt (an error that is not the store failing) is still dead-lettered and the projection carries on', { timeout: 30_000 }, async () => {
    broken = true;
    const rt = await start();
    await tick(1);
    await tick(2, { poison: true });
    const head = await tick(3);
    await rt.waitForIdle(head, 20_000);
    expect(await ns()).toEqual([1, 3]);
    const letters = await mine();
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ event_type: 'Tick', error: 'TypeError: cannot read tick 2', status: 'open' });
  });

  it('contracts §19: a user.erased that fails on every attempt is never dead-lettered: the projection stops on it, says so in status, and applies it (and what follows) once it can', { timeout: 30_000 }, async () => {
    const rt = await start();
    await tick(1, { user: 'gone' });
    const before = await tick(2, { user: 'kept' });
    await rt.waitForIdle(before, 20_000);
    broken = true;
    const erasure = await erase('gone');
    const after = await tick(3, { user: 'kept' });
    await vi.waitFor(
      async () => {
        const s = await statusOf(rt);
        expect(s.stall).toMatchObject({ state: 'stopped', kind: 'erasure', event_type: 'user.erased', event_position: erasure, error: 'TypeError: cannot drop the user' });
        expect(s.stall!.retries).toBeGreaterThanOrEqual(10);
      },
      { timeout: 20_000, interval: 5 },
    );
    expect(await mine()).toEqual([]);
    expect((await inner.getCheckpoint(p.name))?.position).toBe(before);
    expect(await ns()).toEqual([1, 2]);

    broken = false;
    await rt.waitForIdle(after, 20_000);
    expect(await ns()).toEqual([2, 3]);
    expect(await mine()).toEqual([]);
    await vi.waitFor(async () => expect((await statusOf(rt)).stall).toBeNull(), { timeout: 5000, interval: 5 });
  });

  it('contracts §19: a rebuild never dead-letters an erasure event either: it stops on it with the reason, and once fixed rebuilds without it', { timeout: 30_000 }, async () => {
    await tick(1, { user: 'gone' });
    await tick(2, { user: 'kept' });
    const erasure = await erase('gone');
    broken = true;
    runtime = new ProjectorRuntime(events, inner, [p], undefined, { retry: { delaysMs: [1, 1, 1, 1] }, stallBackoff: { firstMs: 1, maxMs: 4 } });
    await runtime.init();
    await expect(runtime.rebuild([p.name])).rejects.toThrow(`stopped on user.erased at ${erasure}, which failed on every attempt (TypeError: cannot drop the user): an erasure event is never dead-lettered`);
    expect(await mine()).toEqual([]);
    expect((await inner.getCheckpoint(p.name))?.status).toBe('rebuilding');
    broken = false;
    await runtime.rebuild([p.name]);
    expect(await ns()).toEqual([2]);
    expect(await mine()).toEqual([]);
  });

  it('contracts §19: a stall stored by a run that ended (its process died while stopped) is cleared when the projection runs again, so nothing waits on it for ever', { timeout: 30_000 }, async () => {
    const since = new Date().toISOString();
    await inner.ensureCollections([projectionStallsCollection]);
    const stale: StallDoc = { _id: p.name, projection: p.name, state: 'stopped', kind: 'erasure', position: 0, event_position: 1, event_type: 'user.erased', error: 'TypeError: x', since, retries: 3, updated_at: since };
    await inner.applyChanges([{ op: 'put', collection: PROJECTION_STALLS, doc: stale }]);
    const rt = await start();
    await vi.waitFor(async () => expect((await statusOf(rt)).stall).toBeNull(), { timeout: 5000, interval: 5 });
  });
});

