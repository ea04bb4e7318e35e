import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApplyBatch, PositionedChange } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../support/tmp.js';

/**
 * A rebuild equals the live state (docs/rebuild.md): the projector cuts the log into batches one
 * way live (an append or two at a time) and another way when it rebuilds (thousands of events), so
 * a document must read back the same, to the order of its fields, however its changes were
 * batched. A job row's life (`etl_jobs`: put, started, finished), with a field a column holds.
 */
const changes: PositionedChange[] = [
  { op: 'put', collection: 'jobs', doc: { _id: 'job-1', status: 'pending', attempts: 0, lease_until: null, records: null, next_attempt_at: null }, position: 1, index: 0 },
  { op: 'update', collection: 'jobs', id: 'job-1', set: { status: 'running', lease_until: '2026-12-07T10:00:00.000Z' }, position: 2, index: 0 },
  { op: 'update', collection: 'jobs', id: 'job-1', set: { status: 'done', lease_until: null, next_attempt_at: null, finished_at: '2026-12-07T10:00:01.000Z', records: { quantity: 3 } }, position: 3, index: 0 },
];

const batch = (from: number, to: number, of: PositionedChange[]): ApplyBatch => ({ projection: 'jobs', expectedPosition: from, position: to, mode: 'live', lastEventAt: null, changes: of });

async function storedAfter(batches: PositionedChange[][]): Promise<string> {
  const store = new SqliteReadStore({ path: join(tempDir(), 'readmodels.sqlite') });
  await store.ensureCollections([{ name: 'jobs', columns: ['lease_until'], indexes: [{ fields: [['lease_until', 1]] }] }]);
  let at = 0;
  for (const b of batches) {
    const to = b[b.length - 1]!.position;
    await store.applyBatch(batch(at, to, b));
    at = to;
  }
  const docs = await store.find('jobs', {});
  await store.close();
  return JSON.stringify(docs);
}

describe('embedded read store: batch boundaries', () => {
  it('a document reads back the same, field order included, whether its changes came in one batch or one a batch (rebuild == live)', async () => {
    const whole = await storedAfter([changes]);
    expect(await storedAfter(changes.map((c) => [c]))).toBe(whole);
    expect(await storedAfter([changes.slice(0, 2), changes.slice(2)])).toBe(whole);
    expect(JSON.parse(whole)).toEqual([{ _id: 'job-1', status: 'done', attempts: 0, lease_until: null, records: { quantity: 3 }, next_attempt_at: null, finished_at: '2026-12-07T10:00:01.000Z' }]);
  });
});
