import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CheckpointMismatchError, type ApplyBatch, type PositionedChange } from '../../src/readstore/readStore.js';
import { LeaseLostError } from '../../src/readstore/leases.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../support/tmp.js';

/**
 * Issue 37 ("work after the append per batch"): the projection batches a thread asks for in the
 * same turn of the event loop (its runners are woken together by the shared tail) commit in one
 * transaction on readmodels.sqlite, each in its own savepoint, each checkpoint checked and moved
 * with its own changes (contracts: a projection's checkpoint moves with its batch, never apart).
 */

const put = (id: string, position: number, extra: Record<string, unknown> = {}): PositionedChange => ({ op: 'put', collection: 'docs', doc: { _id: id, ...extra }, position, index: 0 });

const batch = (projection: string, from: number, to: number, changes: PositionedChange[], more: Partial<ApplyBatch> = {}): ApplyBatch => ({
  projection,
  expectedPosition: from,
  position: to,
  mode: 'live',
  lastEventAt: null,
  changes,
  ...more,
});

async function openStore() {
  const path = join(tempDir(), 'readmodels.sqlite');
  const store = new SqliteReadStore({ path });
  await store.ensureCollections([{ name: 'docs', indexes: [{ fields: [['n', 1]] }] }]);
  // Another connection, as another thread or process reads the file: it sees only what is committed.
  const other = new Database(path, { readonly: true });
  const checkpointOf = (projection: string) => (other.prepare('SELECT position FROM _checkpoints WHERE projection = ?').pluck().get(projection) as number | undefined) ?? 0;
  const docIds = () => other.prepare('SELECT _id FROM rm_docs ORDER BY _id').pluck().all() as string[];
  return { path, store, other, checkpointOf, docIds };
}

describe('embedded read store: the batches of one turn in one transaction (issue 37)', () => {
  it('batches of several projections asked for in one turn write the write-ahead log of a single commit; the same batches awaited one by one write it once each', async () => {
    const { path, store, other } = await openStore();
    const projections = ['a', 'b', 'c'];
    // Every checkpoint row exists before measuring, so each measured batch changes the same pages.
    await Promise.all([...projections, 'solo'].map((p, i) => store.applyBatch(batch(p, 0, 1, [put(`${p}-0`, 1, { n: i })]))));
    // Frames of the write-ahead log, counted from its size after emptying it between measures.
    const checkpointer = new Database(path);
    const pageSize = checkpointer.pragma('page_size', { simple: true }) as number;
    const walFrames = () => (statSync(`${path}-wal`).size - 32) / (24 + pageSize);
    const emptyLog = () => expect(checkpointer.pragma('wal_checkpoint(TRUNCATE)')).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);

    emptyLog();
    await store.applyBatch(batch('solo', 1, 2, [put('solo-1', 2, { n: 10 })]));
    const one = walFrames();
    expect(one).toBeGreaterThan(0);

    emptyLog();
    await Promise.all(projections.map((p, i) => store.applyBatch(batch(p, 1, 2, [put(`${p}-1`, 2, { n: 20 + i })]))));
    expect(walFrames()).toBe(one);

    emptyLog();
    for (const [i, p] of projections.entries()) await store.applyBatch(batch(p, 2, 3, [put(`${p}-2`, 3, { n: 30 + i })]));
    expect(walFrames()).toBe(3 * one);

    expect((await store.listCheckpoints()).map((c) => [c.projection, c.position])).toEqual([['a', 3], ['b', 3], ['c', 3], ['solo', 2]]);
    checkpointer.close();
    other.close();
    await store.close();
  });

  it("a failing batch (its checkpoint moved on, its lease lost, a change it cannot apply) is refused alone: the others of its turn are applied, its changes and checkpoint are not, and an erasure's scrub mark stands or falls with its own batch", async () => {
    const { store, other, checkpointOf, docIds } = await openStore();
    const lease = (await store.leases().acquire('projection:fenced', 'me', 60_000))!;
    const stale = { lease: lease.name, generation: lease.generation - 1 };
    await store.applyBatch(batch('erase-ok', 0, 1, [put('e1', 1), put('e2', 1)]));
    await store.applyBatch(batch('erase-bad', 0, 1, [put('f1', 1)]));

    const outcomes = await Promise.allSettled([
      store.applyBatch(batch('ok-1', 0, 5, [put('ok-1', 5)])),
      store.applyBatch(batch('mismatch', 3, 5, [put('mismatch', 5)])),
      store.applyBatch(batch('fenced', 0, 5, [put('fenced', 5)], { fence: stale })),
      // Its first change applies, the second names a collection nobody declared: both undone.
      store.applyBatch(batch('broken', 0, 5, [put('broken', 5), { op: 'put', collection: 'undeclared', doc: { _id: 'x' }, position: 5, index: 1 }])),
      store.applyBatch(batch('erase-ok', 1, 5, [{ op: 'delete', collection: 'docs', id: 'e1', position: 5, index: 0 }], { erasing: true })),
      store.applyBatch(batch('erase-bad', 1, 5, [{ op: 'delete', collection: 'docs', id: 'f1', position: 5, index: 0 }, { op: 'delete', collection: 'undeclared', id: 'x', position: 5, index: 1 }], { erasing: true })),
      store.applyBatch(batch('ok-2', 0, 5, [put('ok-2', 5)])),
    ]);

    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    const reasons = outcomes.map((o) => (o.status === 'rejected' ? o.reason : null));
    expect(reasons[1]).toBeInstanceOf(CheckpointMismatchError);
    expect(reasons[2]).toBeInstanceOf(LeaseLostError);
    expect(String(reasons[3])).toMatch(/undeclared/);
    expect(docIds()).toEqual(['e2', 'f1', 'ok-1', 'ok-2']);
    expect(['ok-1', 'mismatch', 'fenced', 'broken', 'erase-ok', 'erase-bad', 'ok-2'].map(checkpointOf)).toEqual([5, 0, 0, 0, 5, 1, 5]);
    // The table is due for the scrub once, for the erasure that was applied.
    expect(other.prepare('SELECT tbl, marks FROM _scrub_due').all()).toEqual([{ tbl: 'rm_docs', marks: 1 }]);
    other.close();
    await store.close();
  });

  it('nobody is answered before the whole turn is committed: the first batch to hear, succeeding or failing, finds the last one durable, and the change stamp has moved', async () => {
    const { store, other, checkpointOf, docIds } = await openStore();
    const stampBefore = store.changeStamp();
    const heard: { who: string; lastCheckpoint: number; docs: string[] }[] = [];
    const note = (who: string) => () => heard.push({ who, lastCheckpoint: checkpointOf('last'), docs: docIds() });
    const asked = [
      store.applyBatch(batch('first', 0, 2, [put('first', 2)])).then(note('first')),
      store.applyBatch(batch('refused', 1, 2, [put('refused', 2)])).catch(note('refused')),
      store.applyBatch(batch('last', 0, 2, [put('last', 2)])).then(note('last')),
    ];
    // Asked for, not yet committed: another connection sees nothing of them.
    expect(docIds()).toEqual([]);
    await Promise.all(asked);
    expect(heard).toEqual([
      { who: 'first', lastCheckpoint: 2, docs: ['first', 'last'] },
      { who: 'refused', lastCheckpoint: 2, docs: ['first', 'last'] },
      { who: 'last', lastCheckpoint: 2, docs: ['first', 'last'] },
    ]);
    expect(store.changeStamp()).not.toBe(stampBefore);
    other.close();
    await store.close();
  });

  it("batches that find the write lock held by another thread's connection wait for it without blocking this thread, then commit together", async () => {
    const { path, store, other, checkpointOf, docIds } = await openStore();
    const projectorThread = new Database(path);
    projectorThread.exec('BEGIN IMMEDIATE');
    let answered = 0;
    const asked = ['x', 'y'].map((p) => store.applyBatch(batch(p, 0, 1, [put(p, 1)])).then(() => answered++));
    // The lock is still held: this thread keeps turning (a busy wait would stop it), nothing is committed.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(answered).toBe(0);
    projectorThread.exec('COMMIT');
    await Promise.all(asked);
    expect(docIds()).toEqual(['x', 'y']);
    expect([checkpointOf('x'), checkpointOf('y')]).toEqual([1, 1]);
    projectorThread.close();
    other.close();
    await store.close();
  });

  it('a write asked for just before close is still committed', async () => {
    const { path, store, other } = await openStore();
    other.close();
    const written = store.applyChanges([{ op: 'put', collection: 'docs', doc: { _id: 'late' } }]);
    await store.close();
    await written;
    const reopened = new SqliteReadStore({ path });
    await reopened.ensureCollections([{ name: 'docs', indexes: [{ fields: [['n', 1]] }] }]);
    expect(await reopened.get('docs', 'late')).toEqual({ _id: 'late' });
    await reopened.close();
  });
});
