import { describe, expect, it } from 'vitest';
import type { QuantityRecord } from '../../../commands/ingestion/records.js';
import { samplesProjection } from '../../../projections/records/samplesProjection.js';
import { MAX_SPAN_MS } from '../../../src/catalog/intervalBounds.js';
import type { RecordedEvent } from '../../../src/eventstore/eventStore.js';
import { sampleMergeRule } from '../../../src/merge/sampleMergeRule.js';
import type { Change, ReadStore } from '../../../src/readstore/readStore.js';
import { quantity } from '../../server/records/pipelineFixtures.js';
import { ingested, projectionHarness, rebuildInto, storedSamples, TENANT, USER } from './harness.js';

/**
 * Issue 20, finding 2: the merged-view derivation's scans are clamped by rule, not by data. A
 * record stored before ingestion bounded intervals (here applied to the projection directly, as an
 * old event in the log would be) costs the derivation a few days of work, not one query or loop
 * per day it claims to span; and the merged view treats it as ending the kind's longest span after
 * its start, so every neighbour scan stays within a constant of the rules.
 */
const HOUR = 3_600_000;

const sample = (key: string, source: string, provider: string, start: string, end: string): QuantityRecord =>
  quantity({ external_id: key, source, provider, value: 100, start_date: new Date(start).toISOString(), end_date: new Date(end).toISOString() });

/** Counts the read store's queries while `run` runs. */
async function queriesDuring(store: ReadStore, run: () => Promise<unknown>): Promise<number> {
  let n = 0;
  const find = store.find.bind(store);
  const aggregate = store.aggregate.bind(store);
  store.find = ((...a: Parameters<ReadStore['find']>) => (n++, find(...a))) as ReadStore['find'];
  store.aggregate = ((...a: Parameters<ReadStore['aggregate']>) => (n++, aggregate(...a))) as ReadStore['aggregate'];
  try {
    await run();
  } finally {
    store.find = find;
    store.aggregate = aggregate;
  }
  return n;
}

/** How many UTC days the derivation's statistics rollups were rewritten for. */
function rollupDaysOf(changes: readonly Change[]): number {
  let days = 0;
  for (const c of changes) {
    if (c.op !== 'deleteMany' || c.collection !== 'sample_rollups') continue;
    // A range of days (a whole-user pass), or one day (a batch's changed quarters, batchSpans.ts).
    const day = c.filter.day as { $gte: string; $lte: string } | string;
    days += typeof day === 'string' ? 1 : (Date.parse(day.$lte) - Date.parse(day.$gte)) / 86_400_000 + 1;
  }
  return days;
}

const priorities = (position: number, p: Record<string, string[]>): RecordedEvent => ({
  id: `evt-${position}`,
  type: 'source_priorities.set',
  data: { user_id: USER, tenant_id: TENANT, priorities: p, at: '2026-11-04T00:00:00.000Z', by: 'test' },
  metadata: {},
  streamName: `user-${USER}`,
  streamRevision: position,
  globalPosition: position,
  createdAt: new Date('2026-11-04T00:00:00.000Z'),
});

describe('merged view: spans clamped by rule (issue 20)', () => {
  it('every rule names the longest span it assumes, from the ingestion bounds: counts 36 h, readings scan no span back', () => {
    expect(sampleMergeRule('step_count')).toMatchObject({ maxSpanMs: MAX_SPAN_MS.count, lookbackMs: 36 * HOUR });
    expect(sampleMergeRule('heart_rate')).toMatchObject({ maxSpanMs: MAX_SPAN_MS.measurement, lookbackMs: 0 });
    expect(sampleMergeRule('body_mass')).toMatchObject({ maxSpanMs: 0, lookbackMs: 0 });
  });

  it('a stored record from year 1000 to 9999 costs the derivation a handful of queries, live and after a new source order', async () => {
    const h = await projectionHarness(samplesProjection);
    const poison = ingested('quantity', 1, [sample('poison', 'garmin', 'device-b', '1000-01-01T00:00:00Z', '9999-12-31T00:00:00Z')], { provider: 'device-b' });
    let changes: Change[] = [];
    expect(await queriesDuring(h.store, async () => (changes = await h.apply(poison)))).toBeLessThan(10);
    // The days re-evaluated: those its first 36 hours can reach, not the three million it claims.
    expect(rollupDaysOf(changes)).toBeLessThanOrEqual(4);
    const later = ingested('quantity', 2, [sample('now', 'apple', 'device-a', '2026-11-01T08:00:00Z', '2026-11-01T08:10:00Z')]);
    expect(await queriesDuring(h.store, () => h.apply(later))).toBeLessThan(10);
    // A whole-user pass walks only the windows that hold records: two here, whatever lies between.
    expect(await queriesDuring(h.store, () => h.apply(priorities(3, { activity: ['garmin', 'apple'] })))).toBeLessThan(12);
    const rows = await storedSamples(h.store);
    // Nine thousand years claimed, 36 hours assumed: it overlaps nothing of 2026. Ending in 9999,
    // long after it was received, it is flagged `future` and left out itself (contracts §15).
    expect(rows.map((r) => [r.external_id, r.hidden]).sort()).toEqual([
      ['now', false],
      ['poison', true],
    ]);
    await h.close();
  });

  it('a stored count longer than 36 hours matches as if it ended 36 hours after its start, live and rebuilt alike', async () => {
    const h = await projectionHarness(samplesProjection);
    // Apple ranks before Garmin for activity: Apple's three-day count hides what it overlaps in its first 36 hours only.
    // Received after they ended, so none is flagged `future` (contracts §15).
    const received = '2026-11-05T00:00:00.000Z';
    const long = ingested('quantity', 1, [sample('long', 'apple', 'device-a', '2026-11-01T00:00:00Z', '2026-11-04T00:00:00Z')], { ingested_at: received });
    const inside = ingested('quantity', 2, [sample('inside', 'garmin', 'device-b', '2026-11-02T06:00:00Z', '2026-11-02T07:00:00Z'), sample('beyond', 'garmin', 'device-b', '2026-11-03T06:00:00Z', '2026-11-03T07:00:00Z')], {
      provider: 'device-b',
      ingested_at: received,
    });
    await h.apply(long, inside);
    const flags = async (store: ReadStore) => Object.fromEntries((await storedSamples(store)).map((r) => [r.external_id, r.hidden]));
    expect(await flags(h.store)).toEqual({ long: false, inside: true, beyond: false });

    const fresh = await projectionHarness(samplesProjection);
    await rebuildInto(fresh.store, samplesProjection, [long, inside]);
    expect(await flags(fresh.store)).toEqual(await flags(h.store));
    await fresh.close();
    await h.close();
  });
});
