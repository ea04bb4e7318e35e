import { describe, expect, it } from 'vitest';
import type { NormalizedRecord, QuantityRecord, RecordKind } from '../../../commands/ingestion/records.js';
import type { UserErased } from '../../../commands/users/user.js';
import { projections } from '../../../projections/index.js';
import { categorySamplesProjection } from '../../../projections/records/categorySamplesProjection.js';
import { dailySummariesProjection } from '../../../projections/records/dailySummariesProjection.js';
import { ecgProjection } from '../../../projections/records/ecgProjection.js';
import { heartbeatSeriesProjection } from '../../../projections/records/heartbeatSeriesProjection.js';
import { menstrualCyclesProjection } from '../../../projections/records/menstrualCyclesProjection.js';
import { nutritionProjection } from '../../../projections/records/nutritionProjection.js';
import { observationsProjection } from '../../../projections/records/observationsProjection.js';
import { recentTierLimits, SAMPLE_KEY_RUNS } from '../../../projections/records/sampleBlocks/recentLocators.js';
import { SAMPLE_KEYS, userLocators } from '../../../projections/records/sampleBlocks/sampleBlock.js';
import { samplesProjection } from '../../../projections/records/samplesProjection.js';
import { sleepProjection } from '../../../projections/records/sleepProjection.js';
import { workoutsProjection } from '../../../projections/records/workoutsProjection.js';
import type { RecordedEvent } from '../../../src/eventstore/eventStore.js';
import type { Filter } from '../../../src/readstore/readStore.js';
import type { Projection } from '../../../src/projector/projection.js';
import { category, cycle, daily, ecg, heartbeats, iso, nutrition, observation, point, PROV, sleepSession, workout } from './fixtures.js';
import { ingested, projectionHarness, TENANT, USER } from './harness.js';

const OTHER = '00000000-0000-4000-8000-0000000000cc';

const quantity = (o: Partial<QuantityRecord> = {}): QuantityRecord => ({
  kind: 'quantity',
  external_id: 'steps-1',
  type: 'step_count',
  value: 120,
  unit: 'count',
  start_date: iso('2026-11-01T10:00:00Z'),
  end_date: iso('2026-11-01T10:05:00Z'),
  source_name: 'Apple Watch',
  source_bundle_id: 'com.apple.health.1A2B',
  device_model: 'Watch',
  product_type: 'Watch7,1',
  was_user_entered: false,
  metadata: {},
  ...PROV,
  ...o,
});

/** Every record projection, with records that fill each of its collections (children included). */
const cases: { name: string; projection: Projection; kind: RecordKind; records: () => NormalizedRecord[] }[] = [
  { name: 'samples', projection: samplesProjection, kind: 'quantity', records: () => [quantity(), quantity({ external_id: 'steps-2' })] },
  { name: 'category samples', projection: categorySamplesProjection, kind: 'category', records: () => [category(), category({ external_id: 'cat-2' })] },
  { name: 'sleep', projection: sleepProjection, kind: 'sleep_session', records: () => [sleepSession(), sleepSession({ external_id: 'night-2' })] },
  {
    name: 'workouts',
    projection: workoutsProjection,
    kind: 'workout',
    records: () => [workout({ route: [point('2026-11-01T07:00:00Z', 52.5, 13.4, 34), point('2026-11-01T07:10:00Z', 52.51, 13.41, 36)] })],
  },
  { name: 'nutrition', projection: nutritionProjection, kind: 'nutrition', records: () => [nutrition()] },
  { name: 'daily summaries', projection: dailySummariesProjection, kind: 'daily_summary', records: () => [daily()] },
  { name: 'ECG', projection: ecgProjection, kind: 'ecg', records: () => [ecg(), ecg({ external_id: 'ecg-2' })] },
  { name: 'heartbeat series', projection: heartbeatSeriesProjection, kind: 'heartbeat_series', records: () => [heartbeats()] },
  { name: 'menstrual cycles', projection: menstrualCyclesProjection, kind: 'menstrual_cycle', records: () => [cycle()] },
  { name: 'observations', projection: observationsProjection, kind: 'observation', records: () => [observation()] },
];

const erased = (position: number, userId: string): RecordedEvent => ({
  id: `evt-${position}`,
  type: 'user.erased',
  data: { user_id: userId, tenant_id: TENANT, job_id: 'del-1', erased_at: '2026-11-05T00:00:00.000Z' } satisfies UserErased['data'],
  metadata: {},
  streamName: `user-${userId}`,
  streamRevision: 3,
  globalPosition: position,
  createdAt: new Date('2026-11-05T00:00:00.000Z'),
});

const prioritiesSet = (position: number, userId: string): RecordedEvent => ({
  ...erased(position, userId),
  id: `evt-${position}`,
  type: 'source_priorities.set',
  data: { user_id: userId, tenant_id: TENANT, priorities: { '*': ['garmin', 'apple'] }, at: '2026-11-04T00:00:00.000Z', by: 'test' },
});

describe('record projections on user.erased', () => {
  it('covers every projection of *.ingested events', () => {
    const recordProjections = projections.filter((p) => p.eventTypes.some((t) => t.endsWith('.ingested')));
    expect(cases.map((c) => c.projection.name).sort()).toEqual(recordProjections.map((p) => p.name).sort());
  });

  it.each(cases)("$name: deletes the user's rows of every collection it owns, and nobody else's", async (c) => {
    const p = c.projection;
    expect(p.eventTypes).toContain('user.erased');
    const h = await projectionHarness(p);
    if (p === samplesProjection) {
      // Locators in both tiers (recentLocators.ts): these merged into sample_keys at once, the next ones kept as runs.
      const limit = recentTierLimits.locators;
      const slices = recentTierLimits.slices;
      recentTierLimits.locators = 0;
      recentTierLimits.slices = 1;
      try {
        await h.apply(ingested(c.kind, 8, [quantity({ external_id: 'steps-0' })]), ingested(c.kind, 9, [quantity({ external_id: 'steps-0' })], { user_id: OTHER }));
      } finally {
        recentTierLimits.locators = limit;
        recentTierLimits.slices = slices;
      }
    }
    await h.apply(ingested(c.kind, 10, c.records()), ingested(c.kind, 11, c.records(), { user_id: OTHER }));
    // The samples projection keeps each user's source order too.
    if (p.eventTypes.includes('source_priorities.set')) await h.apply(prioritiesSet(12, USER), prioritiesSet(13, OTHER));

    // A row names its user by user_id; a samples' locator by its `_id`'s first characters (sampleBlock.ts).
    const owned = (collection: string, userId: string): Filter => (collection === SAMPLE_KEYS ? userLocators(userId) : { user_id: userId });
    const count = async (userId: string) => Object.fromEntries(await Promise.all(p.collections.map(async (col) => [col.name, await h.store.count(col.name, owned(col.name, userId))] as const)));
    const before = await count(USER);
    const others = await count(OTHER);
    // Every collection held rows of both users (so the deletion is not vacuous), each row naming its user.
    for (const col of p.collections) {
      expect(before[col.name], col.name).toBeGreaterThan(0);
      expect(others[col.name], col.name).toBeGreaterThan(0);
      // The samples' recent tier holds one row that is no user's: the mark of its last merge (recentLocators.ts).
      const unowned = col.name === SAMPLE_KEY_RUNS ? 1 : 0;
      expect(await h.store.count(col.name), col.name).toBe(before[col.name]! + others[col.name]! + unowned);
    }

    const changes = await h.apply(erased(20, USER));
    expect(changes).toEqual(p.collections.map((col) => ({ op: 'deleteMany', collection: col.name, filter: owned(col.name, USER) })));
    expect(await count(USER)).toEqual(Object.fromEntries(p.collections.map((col) => [col.name, 0])));
    expect(await count(OTHER)).toEqual(others);
    await h.close();
  });
});
