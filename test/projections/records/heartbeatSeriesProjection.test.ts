import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heartbeatSeriesProjection, type HeartbeatSeriesDoc, type RrIntervalDoc } from '../../../projections/records/heartbeatSeriesProjection.js';
import { recordId, recordKey } from '../../../projections/records/recordIds.js';
import { heartbeats } from './fixtures.js';
import { ingested, INGESTED_AT, projectionHarness, PROVIDER, TENANT, USER } from './harness.js';

let h: Awaited<ReturnType<typeof projectionHarness>>;
beforeAll(async () => {
  h = await projectionHarness(heartbeatSeriesProjection);
});
afterAll(async () => {
  await h.close();
});

const KEY = recordKey(USER, PROVIDER, 'hb-1');

describe('heartbeat series projection (Resources: heartbeat series (RR intervals) with derived HRV)', () => {
  it('stores the series with its first beat, beat count and HRV computed from the beats', async () => {
    await h.apply(ingested('heartbeat_series', 7, [heartbeats()]));
    const [s] = await h.all<HeartbeatSeriesDoc>('heartbeat_series');
    expect(s).toMatchObject({
      _id: KEY,
      id: recordId(7, 0),
      user_id: USER,
      tenant_id: TENANT,
      ingested_at: INGESTED_AT,
      day: '2026-11-01',
      first_beat: '2026-11-01T03:00:00.000Z',
      beats: 6,
      source: 'apple',
    });
    expect(s!.rmssd_ms).toBeCloseTo(70.7107, 4);
    expect(s!.sdnn_ms).toBeCloseTo(43.3013, 4);
    expect(s).not.toHaveProperty('kind');
  });

  it('stores one row per beat at start_date + offset, rr_ms null for the first beat and after a gap', async () => {
    const rows = (await h.all<RrIntervalDoc>('rr_intervals')).sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(rows.map((r) => [r.timestamp, r.rr_ms, r.preceded_by_gap])).toEqual([
      ['2026-11-01T03:00:00.000Z', null, false],
      ['2026-11-01T03:00:00.800Z', 800, false],
      ['2026-11-01T03:00:01.600Z', 800, false],
      ['2026-11-01T03:00:02.500Z', 900, false],
      ['2026-11-01T03:00:03.300Z', null, true],
      ['2026-11-01T03:00:04.100Z', 800, false],
    ]);
    expect(rows.every((r) => r.series_key === KEY && r.user_id === USER && r.tenant_id === TENANT)).toBe(true);
  });

  it('a re-sent series (same external_id) keeps its id, recomputes HRV and replaces its beats', async () => {
    await h.apply(
      ingested('heartbeat_series', 12, [
        heartbeats({
          start_date: '2026-11-01T03:00:10.000Z',
          beats: [
            { offset_s: 0.5, preceded_by_gap: false },
            { offset_s: 1.5, preceded_by_gap: false },
            { offset_s: 2.5, preceded_by_gap: false },
          ],
        }),
      ]),
    );
    const series = await h.all<HeartbeatSeriesDoc>('heartbeat_series');
    expect(series).toHaveLength(1);
    expect(series[0]).toMatchObject({ id: recordId(7, 0), first_beat: '2026-11-01T03:00:10.500Z', beats: 3, rmssd_ms: 0, sdnn_ms: null });
    const rows = await h.all<RrIntervalDoc>('rr_intervals');
    expect(rows.map((r) => r.timestamp).sort()).toEqual(['2026-11-01T03:00:10.500Z', '2026-11-01T03:00:11.500Z', '2026-11-01T03:00:12.500Z']);
  });

  it('evolve is pure: the same event gives the same changes', () => {
    const e = ingested('heartbeat_series', 3, [heartbeats()]);
    expect(heartbeatSeriesProjection.evolve(e, 1)).toEqual(heartbeatSeriesProjection.evolve(e, 1));
  });
});
