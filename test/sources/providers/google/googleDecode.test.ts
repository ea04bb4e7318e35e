import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SleepSessionRecord, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import type { Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { googleNotification } from '../../../../src/sources/providers/google/notification.js';
import { googleConnector } from '../../../../src/sources/providers/google/pull.js';
import { GOOGLE_DATA_TYPES, windowFilter } from '../../../../src/sources/providers/google/dataTypes.js';
import { MalformedNotification } from '../../../../src/sources/shared/providerNotifications.js';
import { decode, grantedSandbox, parseAll, runPull } from '../../shared/sandboxPull.js';

/**
 * Google Health API v4 (issue 22, docs/connectors/google.md): data points decoded per type in the
 * catalog's units with the device and offset kept, int64 strings read as numbers, sleep stages and
 * exercise summaries; the pull filters by the window and pages by pageToken; notifications.
 */
const source = { dataSource: { recordingMethod: 'PASSIVELY_MEASURED', device: { displayName: 'Pixel Watch 4', formFactor: 'WATCH' }, platform: 'FITBIT' } };
const page = (points: unknown[]) => ({ dataPoints: points });

describe('Google Health decoding', () => {
  it('heart rate: a sample at physicalTime, beatsPerMinute sent as an int64 string, the offset from utcOffset, the device named', async () => {
    const { records, rejected } = await decode(googleConnector, 'heart-rate', page([{ name: 'users/me/dataTypes/heart-rate/dataPoints/1', ...source, heartRate: { sampleTime: { physicalTime: '2026-10-25T01:30:00Z', utcOffset: '3600s' }, beatsPerMinute: '61' } }]));
    expect(rejected).toEqual([]);
    expect(records[0]).toMatchObject({ type: 'heart_rate', value: 61, unit: 'count/min', start_date: '2026-10-25T01:30:00.000Z', device: 'Pixel Watch 4', provider: 'google', source: 'fitbit', body_worn: true, metadata: { timezone: '+01:00' } });
  });

  it('a point from another platform is source google; a scale is not body-worn (the merged view ranks them as those sources)', async () => {
    const { records } = await decode(googleConnector, 'weight', page([{ name: 'w', dataSource: { device: { displayName: 'Body+', formFactor: 'SCALE' }, platform: 'HEALTH_CONNECT' }, weight: { sampleTime: { physicalTime: '2026-10-25T06:30:00Z' }, weightGrams: 72000 } }]));
    expect(records[0]).toMatchObject({ provider: 'google', source: 'google', body_worn: false, device: 'Body+' });
  });

  it('interval totals and unit conversions: steps, distance in mm → m, weight in g → kg; a missing value field is rejected alone with its reason', async () => {
    const interval = { startTime: '2026-10-25T08:00:00Z', startUtcOffset: '3600s', endTime: '2026-10-25T09:00:00Z', endUtcOffset: '3600s' };
    const steps = await decode(googleConnector, 'steps', page([{ name: 'a', ...source, steps: { interval, count: '812' } }, { name: 'b', ...source, steps: { interval } }]));
    expect(steps.records[0]).toMatchObject({ type: 'step_count', value: 812, start_date: '2026-10-25T08:00:00.000Z', end_date: '2026-10-25T09:00:00.000Z' });
    expect(steps.rejected).toHaveLength(1);
    expect(steps.rejected[0]!.reason).toMatch(/steps\.count is missing/);
    expect((await decode(googleConnector, 'distance', page([{ name: 'd', ...source, distance: { interval, millimeters: '1500000' } }]))).records[0]).toMatchObject({ type: 'distance', value: 1500, unit: 'm' });
    expect((await decode(googleConnector, 'weight', page([{ name: 'w', ...source, weight: { sampleTime: { physicalTime: '2026-10-25T06:30:00Z' }, weightGrams: 72150 } }]))).records[0]).toMatchObject({ type: 'body_mass', value: 72.15, unit: 'kg' });
  });

  it('daily values lie on their civil date; an impossible date is rejected', async () => {
    const { records, rejected } = await decode(googleConnector, 'daily-resting-heart-rate', page([{ name: 'r', ...source, dailyRestingHeartRate: { date: { year: 2026, month: 10, day: 25 }, beatsPerMinute: '55' } }, { name: 'x', ...source, dailyRestingHeartRate: { date: { year: 2026, month: 2, day: 30 }, beatsPerMinute: '55' } }]));
    expect(records[0]).toMatchObject({ type: 'resting_heart_rate', value: 55, start_date: '2026-10-25T00:00:00.000Z', end_date: '2026-10-26T00:00:00.000Z', metadata: { date: '2026-10-25' } });
    expect(rejected).toHaveLength(1);
  });

  it('sleep: stages become phases and totals; a stage outside the night is rejected', async () => {
    const at = (h: number, m = 0) => new Date(Date.UTC(2026, 9, 24, h, m)).toISOString();
    const stages = [
      { startTime: at(22), endTime: at(23), type: 'LIGHT' },
      { startTime: at(23), endTime: at(23, 30), type: 'DEEP' },
      { startTime: at(23, 30), endTime: at(23, 40), type: 'AWAKE' },
      { startTime: at(23, 40), endTime: '2026-10-25T00:40:00.000Z', type: 'REM' },
    ];
    const night = { interval: { startTime: at(22), startUtcOffset: '7200s', endTime: '2026-10-25T00:40:00.000Z', endUtcOffset: '3600s' }, stages };
    const { records, rejected } = await decode(googleConnector, 'sleep', page([{ name: 's1', ...source, sleep: night }, { name: 's2', ...source, sleep: { ...night, stages: [{ ...stages[0], startTime: at(20) }] } }]));
    const s = records[0] as SleepSessionRecord;
    expect(s).toMatchObject({ kind: 'sleep_session', light_sleep_seconds: 3600, deep_sleep_seconds: 1800, awake_seconds: 600, rem_sleep_seconds: 3600, total_sleep_seconds: 9000, metadata: { timezone: '+02:00', end_timezone: '+01:00' } });
    expect(s.phases).toHaveLength(4);
    expect(rejected).toHaveLength(1);
  });

  it('exercise: a workout of the mapped type with Google summary metrics; an unknown type is other, kept in metadata', async () => {
    const interval = { startTime: '2026-10-25T17:00:00Z', endTime: '2026-10-25T17:40:00Z' };
    const { records } = await decode(googleConnector, 'exercise', page([
      { name: 'e1', ...source, exercise: { interval, exerciseType: 'RUNNING', activeDuration: '2340s', metricsSummary: { caloriesKcal: 410, distanceMillimeters: '7200000', averageHeartRateBeatsPerMinute: 151, steps: '6800' } } },
      { name: 'e2', ...source, exercise: { interval, exerciseType: 'KITESURFING' } },
    ]));
    expect(records[0] as WorkoutRecord).toMatchObject({ type: 'running', duration_s: 2340, active_energy_kcal: 410, distance_m: 7200, avg_heart_rate: 151, steps: 6800 });
    expect(records[1] as WorkoutRecord).toMatchObject({ type: 'other', duration_s: 2400, metadata: { exercise_type: 'KITESURFING' } });
  });

  it('every data type of the catalog row has a decoder and a list filter bounded by the window', () => {
    const start = new Date('2026-10-01T00:00:00Z');
    const end = new Date('2026-10-02T00:00:00Z');
    for (const d of GOOGLE_DATA_TYPES) expect(windowFilter(d, start, end)).toMatch(/>= ".*" AND .* <=? ".*"/);
    expect(windowFilter(GOOGLE_DATA_TYPES[0]!, start, end)).toBe('heart_rate.sample_time.physical_time >= "2026-10-01T00:00:00.000Z" AND heart_rate.sample_time.physical_time < "2026-10-02T00:00:00.000Z"');
  });
});

describe('Google Health pull against the sandbox', () => {
  const NOW = new Date('2026-11-20T12:00:00Z');
  let sandbox: Sandbox;
  let token: string;
  beforeAll(async () => ({ sandbox, token } = await grantedSandbox(googleConnector, NOW)));
  afterAll(async () => sandbox.close());

  it('pages heart rate by pageToken until no nextPageToken, every page stored; the records are exactly the window', async () => {
    const window = { start: new Date('2026-11-18T00:00:00Z'), end: new Date('2026-11-20T00:00:00Z') };
    const { payloads } = await runPull(sandbox, googleConnector, { accessToken: token, window, dataType: 'heart-rate', scopes: Object.keys(googleConnector.descriptor.oauth.scopes) });
    expect(payloads.length).toBeGreaterThan(1);
    expect(payloads.slice(1).every((p) => p.ref.includes('pageToken='))).toBe(true);
    const { records, rejected } = await parseAll(googleConnector, payloads, NOW.toISOString());
    expect(rejected).toEqual([]);
    expect(records).toHaveLength(2 * 144);
    expect(records.every((r) => r.kind === 'quantity' && Date.parse(r.start_date) >= window.start.getTime() && Date.parse(r.start_date) < window.end.getTime())).toBe(true);
  });

  it('asks only for data types the granted scopes open', async () => {
    const window = { start: new Date('2026-11-18T00:00:00Z'), end: new Date('2026-11-19T00:00:00Z') };
    const sleepScope = Object.keys(googleConnector.descriptor.oauth.scopes).find((s) => s.endsWith('sleep.readonly'))!;
    const { payloads } = await runPull(sandbox, googleConnector, { accessToken: token, window, scopes: [sleepScope] });
    expect(new Set(payloads.map((p) => p.dataType))).toEqual(new Set(['sleep']));
  });
});

describe('Google Health notifications', () => {
  const now = new Date('2026-11-20T12:00:00Z');
  it('a data change is a notification run of its data type over its interval, an hour either side, never past now', () => {
    const body = Buffer.from(JSON.stringify({ healthUserId: 'gh1', dataType: 'steps', interval: { startTime: '2026-11-20T08:00:00Z', endTime: '2026-11-20T11:30:00Z' } }));
    expect(googleNotification(body, now)).toEqual([{ kind: 'changed', providerUserId: 'gh1', dataType: 'steps', window: { start: new Date('2026-11-20T07:00:00Z'), end: now }, notificationId: expect.stringMatching(/^google:/) }]);
  });
  it('the verification is null; a data type not pulled is ignored; a malformed one throws', () => {
    expect(googleNotification(Buffer.from('{"type":"verification"}'), now)).toBeNull();
    expect(googleNotification(Buffer.from('{"healthUserId":"gh1","dataType":"floors"}'), now)).toEqual([{ kind: 'ignored', providerUserId: 'gh1' }]);
    expect(() => googleNotification(Buffer.from('{"dataType":"steps"}'), now)).toThrow(MalformedNotification);
    expect(() => googleNotification(Buffer.from('[1]'), now)).toThrow(MalformedNotification);
  });
});
