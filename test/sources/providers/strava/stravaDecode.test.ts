import { describe, expect, it } from 'vitest';
import type { NormalizedRecord, RejectedItem } from '../../../../commands/ingestion/records.js';
import { streamsPayload, stravaParser } from '../../../../src/sources/providers/strava/parser.js';

/**
 * Strava decoding (issue 11 "Connectors for real providers"; docs/connectors/strava.md): UTC
 * start with the zone from `timezone`/`utc_offset`, streams keyed by type or listed, routes from
 * latlng only, kilojoules or calories as energy, the sport_type vocabulary, bad input rejected alone.
 */
async function parse(dataType: string, body: Buffer) {
  const records: NormalizedRecord[] = [];
  const rejected: RejectedItem[] = [];
  for await (const item of stravaParser.parse(body, { provider: 'strava', receivedAt: '2026-11-23T10:00:00.000Z', dataType })) {
    if ('record' in item) records.push(item.record);
    else rejected.push(item.rejected);
  }
  return { records, rejected };
}

const RIDE = {
  id: 16371234567,
  name: 'Evening Ride',
  sport_type: 'GravelRide',
  type: 'Ride',
  start_date: '2026-07-01T16:00:00Z',
  start_date_local: '2026-07-01T18:00:00Z',
  timezone: '(GMT+01:00) Europe/Paris',
  utc_offset: 7200,
  elapsed_time: 3700,
  moving_time: 3600,
  distance: 28140.2,
  kilojoules: 650.2,
  has_heartrate: true,
  average_heartrate: 141.3,
  max_heartrate: 171,
  manual: false,
  device_name: 'Garmin Edge 540',
};

const STREAMS = {
  time: { data: [0, 1, 2, 5], series_type: 'distance', original_size: 4, resolution: 'high' },
  latlng: { data: [[48.85, 2.35], [48.8501, 2.3502], null, [48.8503, 2.3506]] },
  altitude: { data: [35, 35.4, 35.6, 36] },
  heartrate: { data: [98, 101, 0, 104] },
  velocity_smooth: { data: [0, 4.1, 4.3, 4.4] },
  distance: { data: [0, 4.1, 8.4, 21.6] },
};

describe('Strava decoding', () => {
  it('makes the workout from the activity and its streams: UTC start, the zone named in timezone, the route and per-second heart rate', async () => {
    const { records, rejected } = await parse('streams', streamsPayload(RIDE, Buffer.from(JSON.stringify(STREAMS))));
    expect(rejected).toEqual([]);
    const w = records[0]!;
    const heart = records.slice(1);
    expect(w).toMatchObject({
      kind: 'workout',
      external_id: '16371234567',
      type: 'cycling',
      start_date: '2026-07-01T16:00:00.000Z',
      end_date: '2026-07-01T17:01:40.000Z',
      duration_s: 3600,
      distance_m: 28140.2,
      active_energy_kcal: 650.2,
      avg_heart_rate: 141.3,
      max_heart_rate: 171,
      device: 'Garmin Edge 540',
      body_worn: true,
      metadata: { timezone: 'Europe/Paris', utc_offset: '+02:00', sport_type: 'GravelRide', start_date_local: '2026-07-01T18:00:00Z' },
    });
    if (w.kind !== 'workout') throw new Error(w.kind);
    // The point without a position is no route point; its heart rate of 0 is no sample.
    expect(w.route.map((p) => p.timestamp)).toEqual(['2026-07-01T16:00:00.000Z', '2026-07-01T16:00:01.000Z', '2026-07-01T16:00:05.000Z']);
    expect(w.route[1]).toEqual({ timestamp: '2026-07-01T16:00:01.000Z', latitude: 48.8501, longitude: 2.3502, altitude_m: 35.4, speed_mps: 4.1, course_deg: null, horizontal_accuracy_m: null });
    expect(heart.map((r) => (r.kind === 'quantity' ? [r.type, r.value, r.start_date, r.external_id] : null))).toEqual([
      ['heart_rate', 98, '2026-07-01T16:00:00.000Z', '16371234567:heart_rate:0'],
      ['heart_rate', 101, '2026-07-01T16:00:01.000Z', '16371234567:heart_rate:1'],
      ['heart_rate', 104, '2026-07-01T16:00:05.000Z', '16371234567:heart_rate:5'],
    ]);
  });

  it('reads streams listed as {type, data} the same as keyed by type', async () => {
    const listed = Object.entries(STREAMS).map(([type, s]) => ({ type, ...s }));
    const a = await parse('streams', streamsPayload(RIDE, Buffer.from(JSON.stringify(STREAMS))));
    const b = await parse('streams', streamsPayload(RIDE, Buffer.from(JSON.stringify(listed))));
    expect(b.records).toEqual(a.records);
  });

  it('an activity whose streams were gone (404) is still a workout, without a route; heart rate then comes from the summary', async () => {
    const { records } = await parse('streams', streamsPayload({ ...RIDE, calories: 712 }, null));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ route: [], avg_heart_rate: 141.3, active_energy_kcal: 712 });
  });

  it('in a list page, only manual activities are workouts (the others come with their streams); unknown sports are other', async () => {
    const page = [RIDE, { id: 7, manual: true, sport_type: 'Underwater Hockey', start_date: '2026-07-02T07:00:00Z', elapsed_time: 1800, moving_time: 1800, timezone: '(GMT-05:00) America/New_York', utc_offset: -14400 }, { id: 8, manual: true, type: 'Walk', start_date: '2026-07-03T07:00:00Z', elapsed_time: 600 }];
    const { records, rejected } = await parse('activities', Buffer.from(JSON.stringify(page)));
    expect(rejected).toEqual([]);
    expect(records.map((r) => (r.kind === 'workout' ? [r.external_id, r.type, r.body_worn, r.metadata.timezone, r.metadata.utc_offset] : null))).toEqual([
      ['7', 'other', false, 'America/New_York', '-04:00'],
      ['8', 'walking', false, null, null],
    ]);
  });

  it('rejects an activity without a UTC start alone, and a body that is not JSON as one item', async () => {
    const page = [{ id: 9, manual: true, start_date: 'yesterday', elapsed_time: 60 }, { id: 10, manual: true, sport_type: 'Yoga', start_date: '2026-07-03T07:00:00Z', elapsed_time: 600 }];
    const { records, rejected } = await parse('activities', Buffer.from(JSON.stringify(page)));
    expect(records.map((r) => r.external_id)).toEqual(['10']);
    expect(rejected).toEqual([expect.objectContaining({ location: 'record 1', reason: expect.stringContaining('start_date') })]);
    expect((await parse('activities', Buffer.from('<html>'))).rejected).toEqual([expect.objectContaining({ reason: 'the answer is not JSON' })]);
  });
});
