import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { DeviceParser, NormalizedRecord, ParseItem, RejectedItem } from '../../../commands/ingestion/records.js';
import { recordBoundsViolation } from '../../../commands/ingestion/recordBounds.js';
import { deviceParsers, PULL_CONNECTORS } from '../../../src/sources/registry.js';
import { wrapAnswer } from '../../../src/sources/providers/fitbit/fitbitPayload.js';
import { garminParser } from '../../../src/sources/providers/garmin/parser.js';
import { streamsPayload } from '../../../src/sources/providers/strava/parser.js';
import { demoParser } from '../../../src/sources/files/demo/demoParser.js';
import { withinBounds } from '../../../src/processes/etl/withinBounds.js';
import { garminNotification } from '../../../src/sandbox/data/garmin.js';
import { buildGadgetbridgeDb, insertDevice } from '../../fixtures/device-c/buildGadgetbridgeExport.js';
import { category, daily, sleepSession, workout } from '../../projections/records/fixtures.js';
import { quantity as sample } from '../../server/records/pipelineFixtures.js';

/**
 * Issue 20, finding 2: every source's records are held to the interval bounds of their kind at
 * normalisation (src/catalog/intervalBounds.ts, commands/ingestion/recordBounds.ts): instants
 * start where they end, counts and measurements span at most 36 h, sessions 48 h, and every time
 * lies between 1900-01-01 and a day after the receipt. Records outside are rejected with a reason.
 * One check (withinBounds, run by runEtlJob) serves every parser: each parser path is shown here.
 */
const RECEIVED = '2026-11-23T10:00:00.000Z';
const H = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const T0 = Date.parse('2026-11-20T08:00:00.000Z');

async function run(parser: DeviceParser, body: Buffer, dataType: string | null = null): Promise<{ records: NormalizedRecord[]; rejected: RejectedItem[] }> {
  const records: NormalizedRecord[] = [];
  const rejected: RejectedItem[] = [];
  const items: AsyncIterable<ParseItem> = withinBounds(parser.parse(body, { provider: parser.slug, receivedAt: RECEIVED, dataType }), RECEIVED);
  for await (const item of items) {
    if ('record' in item) records.push(item.record);
    else rejected.push(item.rejected);
  }
  return { records, rejected };
}
const json = (v: unknown) => Buffer.from(JSON.stringify(v));

/** A quantity record of `type` over [start, end]. */
const quantity = (type: string, start: number, end: number): NormalizedRecord => sample({ type, value: 1, start_date: iso(start), end_date: iso(end) });

describe('interval bounds per kind (issue 20: instants, counts ≤ 36 h, sessions ≤ 48 h, 1900 to receipt + 1 day)', () => {
  it('instants: a body measurement must start where it ends', () => {
    expect(recordBoundsViolation(quantity('body_mass', T0, T0), RECEIVED)).toBeNull();
    expect(recordBoundsViolation(quantity('body_mass', T0, T0 + 1000), RECEIVED)).toMatch(/body_mass sample: a measurement at one moment/);
  });

  it('counts: steps, energy and distance over at most 36 hours; longer ones are rejected, not split', () => {
    expect(recordBoundsViolation(quantity('step_count', T0 - 36 * H, T0), RECEIVED)).toBeNull();
    expect(recordBoundsViolation(quantity('step_count', T0 - 36 * H - 1, T0), RECEIVED)).toMatch(/step_count sample: spans 36 h, more than the 36 h a count may span/);
    expect(recordBoundsViolation(quantity('active_energy_burned', T0 - 72 * H, T0), RECEIVED)).toMatch(/spans 3 days/);
    expect(recordBoundsViolation(quantity('walking_running_distance', T0 - 40 * H, T0), RECEIVED)).toMatch(/a count may span/);
  });

  it('measurements (readings, nightly figures, unknown types) over at most 36 hours', () => {
    expect(recordBoundsViolation(quantity('resting_heart_rate', T0 - 24 * H, T0), RECEIVED)).toBeNull();
    expect(recordBoundsViolation(quantity('heart_rate', T0 - 37 * H, T0), RECEIVED)).toMatch(/a measurement may span/);
    expect(recordBoundsViolation(quantity('something_new', T0 - 37 * H, T0), RECEIVED)).toMatch(/a measurement may span/);
  });

  it('sessions: sleep, its phases, workouts and category samples over at most 48 hours', () => {
    const p = { provider: 'device-a', source: 'apple', device: null, body_worn: true };
    expect(recordBoundsViolation(sleepSession({ ...p, bedtime_start: iso(T0 - 48 * H), bedtime_end: iso(T0), phases: [] }), RECEIVED)).toBeNull();
    expect(recordBoundsViolation(sleepSession({ ...p, bedtime_start: iso(T0 - 49 * H), bedtime_end: iso(T0), phases: [] }), RECEIVED)).toMatch(/sleep session: spans 49 h/);
    expect(recordBoundsViolation(sleepSession({ ...p, bedtime_start: iso(T0 - 8 * H), bedtime_end: iso(T0), phases: [{ phase: 'deep', start_date: '1000-01-01T00:00:00.000Z', end_date: iso(T0) }] }), RECEIVED)).toMatch(/sleep phase deep: starts 1000-01-01/);
    expect(recordBoundsViolation(workout({ ...p, start_date: iso(T0 - 49 * H), end_date: iso(T0) }), RECEIVED)).toMatch(/workout: spans 49 h, more than the 48 h a session may span/);
    expect(recordBoundsViolation(workout({ ...p, start_date: iso(T0 - H), end_date: iso(T0), route: [{ timestamp: '9999-01-01T00:00:00.000Z', latitude: 0, longitude: 0, altitude_m: null, speed_mps: null, course_deg: null, horizontal_accuracy_m: null }] }), RECEIVED)).toMatch(/route point: starts 9999/);
    expect(recordBoundsViolation(category({ ...p, type: 'mindful_session', start_date: iso(T0 - 49 * H), end_date: iso(T0) }), RECEIVED)).toMatch(/a session may span/);
  });

  it('states (pregnancy and the like) last up to three years and may end at a planned date; their start must have come', () => {
    const p = { provider: 'device-a', source: 'apple', device: null, body_worn: true };
    expect(recordBoundsViolation(category({ ...p, type: 'pregnancy', start_date: iso(T0 - 200 * 24 * H), end_date: iso(T0 + 80 * 24 * H) }), RECEIVED)).toBeNull();
    expect(recordBoundsViolation(category({ ...p, type: 'pregnancy', start_date: iso(T0 + 5 * 24 * H), end_date: iso(T0 + 80 * 24 * H) }), RECEIVED)).toMatch(/more than a day after/);
    expect(recordBoundsViolation(category({ ...p, type: 'lactation', start_date: iso(T0 - 4 * 366 * 24 * H), end_date: iso(T0) }), RECEIVED)).toMatch(/a state may span/);
  });

  it('dates: 1900-01-01 up to a day after the receipt, for every kind (daily summaries by their date)', () => {
    const p = { provider: 'device-a', source: 'apple', device: null, body_worn: true };
    expect(recordBoundsViolation(quantity('heart_rate', Date.parse('1899-12-31T23:59:59Z'), Date.parse('1899-12-31T23:59:59Z')), RECEIVED)).toMatch(/before 1900-01-01/);
    expect(recordBoundsViolation(quantity('heart_rate', Date.parse(RECEIVED) + 24 * H, Date.parse(RECEIVED) + 24 * H), RECEIVED)).toBeNull();
    expect(recordBoundsViolation(quantity('heart_rate', Date.parse(RECEIVED) + 24 * H + 1, Date.parse(RECEIVED) + 24 * H + 1), RECEIVED)).toMatch(/more than a day after the payload was received/);
    expect(recordBoundsViolation(quantity('step_count', Date.parse(RECEIVED) + 23 * H, Date.parse(RECEIVED) + 25 * H), RECEIVED)).toMatch(/ends .* more than a day after/);
    expect(recordBoundsViolation(daily({ ...p, date: '2026-11-24' }), RECEIVED)).toBeNull();
    expect(recordBoundsViolation(daily({ ...p, date: '2026-11-25' }), RECEIVED)).toMatch(/daily summary: 2026-11-25 is more than a day after/);
    expect(recordBoundsViolation(daily({ ...p, date: '1000-01-01' }), RECEIVED)).toMatch(/before 1900/);
  });
});

describe('every parser path goes through the same bounds (issue 20: device-a, device-b, device-c, each provider, the demo)', () => {
  it('device-a NDJSON: a record from year 1000 to 9999 and a three-day step count are rejected with their reasons; the rest is kept', async () => {
    const line = (o: Record<string, unknown>) => JSON.stringify({ kind: 'quantity', type: 'HKQuantityTypeIdentifierStepCount', value: 10, unit: 'count', source_name: 'Watch', ...o });
    const body = gzipSync(
      [
        line({ uuid: 'A0000000-0000-4000-8000-000000000001', start_date: '1000-01-01T00:00:00Z', end_date: '9999-12-31T00:00:00Z' }),
        line({ uuid: 'A0000000-0000-4000-8000-000000000002', start_date: '2026-11-17T00:00:00Z', end_date: '2026-11-20T00:00:00Z' }),
        line({ uuid: 'A0000000-0000-4000-8000-000000000003', start_date: '2026-11-20T00:00:00Z', end_date: '2026-11-20T00:10:00Z' }),
        line({ uuid: 'A0000000-0000-4000-8000-000000000004', type: 'HKQuantityTypeIdentifierBodyMass', value: 70, unit: 'kg', start_date: '2026-11-20T07:00:00Z', end_date: '2026-11-20T07:01:00Z' }),
      ].join('\n'),
    );
    const { records, rejected } = await run(deviceParsers['device-a']!, body);
    expect(records.map((r) => r.external_id)).toEqual(['A0000000-0000-4000-8000-000000000003']);
    expect(rejected.map((r) => r.reason)).toEqual([
      expect.stringMatching(/^step_count sample: starts 1000-01-01T00:00:00.000Z, before 1900-01-01$/),
      expect.stringMatching(/^step_count sample: spans 3 days, more than the 36 h a count may span$/),
      expect.stringMatching(/^body_mass sample: a measurement at one moment/),
    ]);
    expect(rejected[0]!.location).toBe('quantity A0000000-0000-4000-8000-000000000001');
    expect(JSON.parse(rejected[0]!.excerpt)).toMatchObject({ start_date: '1000-01-01T00:00:00.000Z' });
  });

  it('device-b Health Connect: steps over three days and a sleep session over 60 hours are rejected', async () => {
    const meta = (id: string) => ({ id, dataOrigin: { packageName: 'com.example' }, lastModifiedTime: '2026-11-20T08:00:00Z' });
    const body = json({
      records: [
        { recordType: 'Steps', startTime: '2026-11-17T07:00:00Z', startZoneOffset: '+01:00', endTime: '2026-11-20T07:00:00Z', endZoneOffset: '+01:00', count: 30000, metadata: meta('s1') },
        { recordType: 'Steps', startTime: '2026-11-20T07:00:00Z', startZoneOffset: '+01:00', endTime: '2026-11-20T08:00:00Z', endZoneOffset: '+01:00', count: 900, metadata: meta('s2') },
        { recordType: 'SleepSession', startTime: '2026-11-17T22:00:00Z', startZoneOffset: '+01:00', endTime: '2026-11-20T10:00:00Z', endZoneOffset: '+01:00', stages: [], metadata: meta('z1') },
      ],
    });
    const { records, rejected } = await run(deviceParsers['device-b']!, body);
    expect(records.map((r) => r.external_id)).toEqual(['s2']);
    expect(rejected.map((r) => r.reason)).toEqual([expect.stringMatching(/^step_count sample: spans 3 days/), expect.stringMatching(/^sleep session: spans 60 h/)]);
  });

  it('device-c Gadgetbridge: a three-day workout is rejected', async () => {
    const start = Date.parse('2026-11-17T07:00:00Z');
    const body = buildGadgetbridgeDb((db) => {
      insertDevice(db, { id: 1, identifier: 'C8:0F:10:6A:21:B4', name: 'Mi Smart Band 6', manufacturer: 'Huami', typeName: 'MIBAND6' });
      const row = db.prepare('INSERT INTO "BASE_ACTIVITY_SUMMARY" ("_id", "NAME", "START_TIME", "END_TIME", "ACTIVITY_KIND", "DEVICE_ID", "USER_ID") VALUES (?, ?, ?, ?, 16, 1, 1)');
      row.run(1, 'Walk', start, start + 72 * H);
      row.run(2, 'Walk', start, start + H);
    });
    const { records, rejected } = await run(deviceParsers['device-c']!, body);
    expect(records.filter((r) => r.kind === 'workout')).toHaveLength(1);
    expect(rejected.map((r) => r.reason)).toEqual([expect.stringMatching(/workout: spans 3 days, more than the 48 h a session may span/)]);
  });

  it('oura: a sleep period of three days is rejected', async () => {
    const period = { id: 'p1', bedtime_start: '2026-11-17T23:00:00+01:00', bedtime_end: '2026-11-20T07:00:00+01:00', day: '2026-11-20', type: 'long_sleep', total_sleep_duration: 3600 };
    const { rejected } = await run(PULL_CONNECTORS.oura!.parser, json({ data: [period], next_token: null }), 'sleep');
    expect(rejected.map((r) => r.reason)).toContain('sleep session: spans 56 h, more than the 48 h a session may span');
  });

  it('whoop: a workout of three days is rejected', async () => {
    const w = { id: 'w1', user_id: 1, start: '2026-11-17T08:00:00.000Z', end: '2026-11-20T08:00:00.000Z', timezone_offset: '+00:00', sport_name: 'running', score_state: 'UNSCORABLE', sport_id: 1 };
    const { rejected } = await run(PULL_CONNECTORS.whoop!.parser, json({ records: [w] }), 'workout');
    expect(rejected.map((r) => r.reason)).toEqual([expect.stringMatching(/^running workout: spans 3 days/)]);
  });

  it('fitbit: a sleep log of three days is rejected', async () => {
    const log = { logId: 1, dateOfSleep: '2026-11-20', startTime: '2026-11-17T23:00:00.000', endTime: '2026-11-20T07:00:00.000', type: 'classic', isMainSleep: true, minutesAsleep: 400, levels: { data: [], shortData: [] } };
    const body = wrapAnswer({ timezone: 'Europe/Paris', offsetFromUTCMillis: H }, json({ sleep: [log] }));
    const { rejected } = await run(PULL_CONNECTORS.fitbit!.parser, body, 'sleep');
    expect(rejected.map((r) => r.reason)).toEqual([expect.stringMatching(/^sleep session: spans 56 h/)]);
  });

  it('strava: an activity of three days is rejected', async () => {
    const ride = { id: 1, name: 'Tour', sport_type: 'Ride', type: 'Ride', start_date: '2026-11-17T08:00:00Z', start_date_local: '2026-11-17T09:00:00Z', utc_offset: 3600, elapsed_time: 72 * 3600, moving_time: 60000, distance: 900000, manual: false };
    const { rejected } = await run(PULL_CONNECTORS.strava!.parser, streamsPayload(ride, null), 'streams');
    expect(rejected.map((r) => r.reason)).toEqual([expect.stringMatching(/workout: spans 3 days/)]);
  });

  it('withings: a sleep summary of three days is rejected', async () => {
    const start = Date.parse('2026-11-17T22:00:00Z') / 1000;
    const summary = { id: 9, timezone: 'Europe/Paris', model: 32, startdate: start, enddate: start + 72 * 3600, date: '2026-11-20', data: { total_sleep_time: 25200 } };
    const { rejected } = await run(PULL_CONNECTORS.withings!.parser, json({ status: 0, body: { series: [summary], more: false, offset: 0 } }), 'sleep');
    expect(rejected.map((r) => r.reason)).toEqual([expect.stringMatching(/^sleep session: spans 3 days/)]);
  });

  it('polar: an exercise of three days is rejected', async () => {
    const exercise = { id: 1, device: 'Polar Vantage V2', 'start-time': '2026-11-17T08:00:00', 'start-time-utc-offset': 60, duration: 'PT72H', sport: 'RUNNING', 'detailed-sport-info': 'RUNNING' };
    const { rejected } = await run(PULL_CONNECTORS.polar!.parser, json(exercise), 'exercises');
    expect(rejected.map((r) => r.reason)).toEqual([expect.stringMatching(/workout: spans 3 days/)]);
  });

  it('garmin: a realistic push passes whole; an activity of three days is rejected', async () => {
    const window = { start: new Date('2026-11-18T00:00:00Z'), end: new Date('2026-11-20T00:00:00Z') };
    const push = garminNotification('5a1d7c2e-93f1-4c1a-a0b2-1f6e2d3c4b5a', 'activities', window);
    expect((await run(garminParser, json(push), 'activities')).rejected).toEqual([]);
    const long = { activities: (push.activities!.slice(0, 1) as Record<string, unknown>[]).map((a) => ({ ...a, durationInSeconds: 72 * 3600 })) };
    const { rejected } = await run(garminParser, json(long), 'activities');
    expect(rejected.map((r) => r.reason)).toEqual([expect.stringMatching(/workout: spans 3 days/)]);
  });

  it('demo generator: a recipe for a day in year 1000 gives only rejected records', async () => {
    const recipe = { format: 'wellstream-demo/1', persona: 'mix', seed: 's', days: ['1000-01-01'], anchor: '1000-01-01' };
    const { records, rejected } = await run(demoParser, json(recipe));
    expect(records).toEqual([]);
    expect(rejected.length).toBeGreaterThan(10);
    for (const r of rejected) expect(r.reason).toMatch(/before 1900-01-01/);
  });
});
