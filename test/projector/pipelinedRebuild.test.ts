import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { DEAD_LETTERS } from '../../src/projector/deadLetters.js';
import { defineProjection, type Projection } from '../../src/projector/projection.js';
import { ProjectorRuntime } from '../../src/projector/projectorRuntime.js';
import type { Change, ReadStore } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { ThreadedSqliteReadStore } from '../../src/readstore/threadedSqliteReadStore.js';
import { tempDir } from '../support/tmp.js';

/**
 * A rebuild's replay through a store thread (rebuild.ts `replayStore`, the CLI's on the embedded
 * store): a chunk's write is not waited for while the next chunk is prepared, and every rule of
 * the replay in-thread still holds: the rebuild is committed whole before it answers, one
 * interrupted leaves a prefix marked `rebuilding`, and a chunk whose write fails (learned one
 * chunk late) is redone event by event, its bad event dead-lettered.
 */
const ROWS_PER_EVENT = 1000;
const EVENTS = 120;
/**
 * One row of each of these events holds a value the store cannot encode (a BigInt): their writes
 * fail, every time, where evolve succeeds. One in the middle, and the last: its chunk's failure is
 * learned only once the log is read to its end.
 */
const FAILING = [50, EVENTS - 1];

const projection: Projection = defineProjection({
  name: 'rows',
  collections: [{ name: 'rows', indexes: [{ fields: [['group', 1]] }] }],
  eventTypes: ['rows.added'],
  evolve: (e): Change[] =>
    Array.from({ length: ROWS_PER_EVENT }, (_, i): Change => {
      const n = (e.data as { n: number }).n;
      return { op: 'update', collection: 'rows', id: `${n}-${i}`, upsert: true, set: { group: n % 7, i, ...(FAILING.includes(n) && i === 0 ? { big: 10n } : {}) } };
    }),
});

async function logOf(path: string): Promise<EventStore> {
  const events = new SqliteEventStore({ path });
  for (let n = 0; n < EVENTS; n++) await events.appendToStream(`rows-${n}`, [{ type: 'rows.added', data: { n } }]);
  return events;
}

const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const s of opened.reverse()) await s.close();
});

/** A fresh log and read store; `replay` opens the replay's store thread on the same file. */
async function setUp() {
  const dir = tempDir();
  const events = await logOf(join(dir, 'events.sqlite'));
  const path = join(dir, 'read.sqlite');
  const store = new SqliteReadStore({ path });
  opened.push(events, store);
  const replay = () => ThreadedSqliteReadStore.open({ path }) as Promise<ReadStore>;
  return { events, path, store, replay, runtime: new ProjectorRuntime(events, store, [projection], undefined, { retry: { delaysMs: [1, 1] } }) };
}

describe('projections rebuild through a store thread (issue 38, h18: the replay pipelined)', () => {
  it('equals the replay in-thread, committed whole before it answers: rows, the dead letters of the events whose writes fail (the last learned at the end of the log), the checkpoint live at the last event', { timeout: 60_000 }, async () => {
    const a = await setUp();
    await a.runtime.rebuild(undefined, undefined, a.replay);
    const b = await setUp();
    await b.runtime.rebuild(undefined);
    const seen = new SqliteReadStore({ path: a.path });
    opened.push(seen);
    expect(await seen.count('rows')).toBe((EVENTS - FAILING.length) * ROWS_PER_EVENT);
    expect(await seen.getCheckpoint('rows')).toMatchObject({ status: 'live', position: await a.events.headPosition() });
    const letters = await seen.find(DEAD_LETTERS, {});
    expect(letters.map((d) => [d.projection, d.status, d.event_type])).toEqual(FAILING.map(() => ['rows', 'open', 'rows.added']));
    const strip = (docs: Record<string, unknown>[]) => docs.map(({ dead_lettered_at: _a, updated_at: _u, event_id: _e, ...rest }) => rest);
    expect(strip(letters)).toEqual(strip(await b.store.find(DEAD_LETTERS, {})));
    expect(await seen.find('rows', { sort: [['_id', 1]] })).toEqual(await b.store.find('rows', { sort: [['_id', 1]] }));
  });

  it('one interrupted mid-way leaves a prefix with its checkpoint, marked rebuilding, and run again equals a clean rebuild', { timeout: 60_000 }, async () => {
    const { events, path, store, replay, runtime } = await setUp();
    let chunks = 0;
    const dying = () => {
      if (++chunks === 3) throw new Error('killed');
    };
    await expect(runtime.rebuild(undefined, dying, replay)).rejects.toThrow('killed');
    const other = new SqliteReadStore({ path });
    opened.push(other);
    const seen = await other.getCheckpoint('rows');
    expect(seen?.status).toBe('rebuilding');
    expect(seen!.position).toBeGreaterThan(0);
    expect(seen!.position).toBeLessThan(await events.headPosition());
    // A prefix: the rows of every event up to the checkpoint, none after it.
    const upTo = (await events.readAll({ maxCount: EVENTS })).filter((e) => e.globalPosition <= seen!.position).length;
    expect(await other.count('rows')).toBe(upTo * ROWS_PER_EVENT);
    await runtime.rebuild(undefined, undefined, replay);
    expect(await store.count('rows')).toBe((EVENTS - FAILING.length) * ROWS_PER_EVENT);
    expect(await other.getCheckpoint('rows')).toMatchObject({ status: 'live', position: await events.headPosition() });
  });
});

describe('a read store thread runs its calls in the order they were made', () => {
  it('a read asked for after a write that was not waited for sees that write', { timeout: 30_000 }, async () => {
    const path = join(tempDir(), 'read.sqlite');
    const store = await ThreadedSqliteReadStore.open({ path });
    try {
      await store.ensureCollections([{ name: 'things' }]);
      await store.setCheckpoint('p', 0, 'rebuilding');
      const written = store.applyBatch({ projection: 'p', expectedPosition: 0, position: 1, mode: 'rebuilding', lastEventAt: null, changes: [{ op: 'put', collection: 'things', doc: { _id: 'a', n: 1 }, position: 1, index: 0 }], deferCommit: true });
      const read = store.find('things', {});
      expect(await read).toEqual([{ _id: 'a', n: 1 }]);
      await written;
    } finally {
      await store.close();
    }
  });
});
