import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { coalesceChanges } from '../../src/readstore/coalescedChanges.js';
import type { Change } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../support/tmp.js';

const JOBS = { name: 'jobs', indexes: [{ fields: [['status', 1]] as [string, 1][] }] };

/** The documents after applying `changes` in one batch, and how many row writes reached the table. */
async function applied(changes: Change[], existing: Change[] = []): Promise<{ docs: unknown[]; writes: number }> {
  const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
  await store.ensureCollections([JOBS]);
  if (existing.length) await store.applyChanges(existing);
  let writes = 0;
  const run = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Database.Database, sql: string) {
    const stmt = run.call(this, sql);
    if (/^(INSERT|UPDATE)\b.*rm_jobs/s.test(sql)) {
      const original = stmt.run.bind(stmt) as (...args: unknown[]) => Database.RunResult;
      stmt.run = ((...args: unknown[]) => (writes++, original(...args))) as typeof stmt.run;
    }
    return stmt;
  } as typeof run;
  try {
    await store.applyChanges(changes);
  } finally {
    Database.prototype.prepare = run;
  }
  const docs = await store.find('jobs', { sort: [['_id', 1]] });
  await store.close();
  return { docs, writes };
}

describe('a batch\'s plain updates of one document are written once (coalescedChanges.ts)', () => {
  it('a put followed by set updates of the same document is one put of the result; the document is what the changes one by one give', async () => {
    const changes: Change[] = [
      { op: 'put', collection: 'jobs', doc: { _id: 'a', status: 'pending', attempts: 0, error: null } },
      { op: 'update', collection: 'jobs', id: 'a', set: { status: 'running', lease: 'x' } },
      { op: 'update', collection: 'jobs', id: 'a', set: { status: 'done', lease: null, skipped: undefined } },
    ];
    expect(coalesceChanges(changes)).toEqual([{ op: 'put', collection: 'jobs', doc: { _id: 'a', status: 'done', attempts: 0, error: null, lease: null } }]);
    const { docs, writes } = await applied(changes);
    expect(writes).toBe(1);
    expect(docs).toEqual([{ _id: 'a', status: 'done', attempts: 0, error: null, lease: null }]);
  });

  it('successive set updates of one stored document are one update; a missing document stays missing', async () => {
    const existing: Change[] = [{ op: 'put', collection: 'jobs', doc: { _id: 'a', status: 'pending', n: 1 } }];
    const changes: Change[] = [
      { op: 'update', collection: 'jobs', id: 'a', set: { status: 'running', at: 't1' } },
      { op: 'update', collection: 'jobs', id: 'a', set: { status: 'done' } },
      { op: 'update', collection: 'jobs', id: 'missing', set: { status: 'running' } },
      { op: 'update', collection: 'jobs', id: 'missing', set: { status: 'done' } },
    ];
    expect(coalesceChanges(changes)).toHaveLength(2);
    const { docs, writes } = await applied(changes, existing);
    expect(writes).toBe(2);
    expect(docs).toEqual([{ _id: 'a', status: 'done', n: 1, at: 't1' }]);
  });

  it('leaves alone what order or kind would change: counters, unsets, upserts, dotted paths, `_id`, other documents and deletions in between', () => {
    const put: Change = { op: 'put', collection: 'jobs', doc: { _id: 'a', n: 1 } };
    const kept: Change[][] = [
      [put, { op: 'update', collection: 'jobs', id: 'a', inc: { n: 1 } }],
      [put, { op: 'update', collection: 'jobs', id: 'a', set: { s: 1 }, unset: ['n'] }],
      [put, { op: 'update', collection: 'jobs', id: 'a', set: { s: 1 }, upsert: true }],
      [put, { op: 'update', collection: 'jobs', id: 'a', set: { 'o.x': 1 } }],
      [put, { op: 'update', collection: 'jobs', id: 'a', set: { _id: 'b' } }],
      [put, { op: 'update', collection: 'jobs', id: 'b', set: { s: 1 } }],
      [put, { op: 'update', collection: 'other', id: 'a', set: { s: 1 } }],
      [put, { op: 'delete', collection: 'jobs', id: 'a' }, { op: 'update', collection: 'jobs', id: 'a', set: { s: 1 } }],
      [{ op: 'update', collection: 'jobs', id: 'a', set: { s: 1 }, setOnInsert: { n: 0 }, upsert: true }, { op: 'update', collection: 'jobs', id: 'a', set: { s: 2 } }],
    ];
    for (const changes of kept) expect(coalesceChanges(changes)).toBe(changes);
  });
});
