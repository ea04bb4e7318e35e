import { describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../../../commands/ingestion/records.js';
import { ouraConnector } from '../../../../src/sources/providers/oura/pull.js';
import { OURA_ACTIVITIES, ouraActivity } from '../../../../src/sources/providers/oura/vocabulary.js';
import { decode } from '../../shared/sandboxPull.js';

/**
 * Decoding Oura API v2 answers (issue 11 "Connectors for real providers", docs/connectors/oura.md):
 * every data type in the shapes Oura documents, local offsets kept, HRV typed as RMSSD, nulls
 * and unfinished days, bad documents rejected alone.
 */
const of = <K extends NormalizedRecord['kind']>(records: NormalizedRecord[], kind: K) => records.filter((r): r is Extract<NormalizedRecord, { kind: K }> => r.kind === kind);

const activity = {
  id: 'a2b1c3d4-0000-4000-8000-000000000001',
  class_5_min: '1'.repeat(288),
  score: 82,
  active_calories: 412,
  average_met_minutes: 1.53,
  contributors: { meet_daily_targets: 60, move_every_hour: 100, recovery_time: 100, stay_active: 78, training_frequency: 80, training_volume: 96 },
  equivalent_walking_distance: 8702,
  met: { interval: 60, items: [0.9, 1.2, 3.4], timestamp: '2026-03-29T04:00:00+03:00' },
  steps: 10412,
  total_calories: 2291,
  day: '2026-03-29',
  timestamp: '2026-03-29T04:00:00+03:00',
};

describe('Oura decoding', () => {
  it('daily activity: a daily summary of the local day and its totals as samples over Oura\u2019s day, offset kept, long series left out', async () => {
    const { records, rejected } = await decode(ouraConnector, 'daily_activity', { data: [activity], next_token: null });
    expect(rejected).toEqual([]);
    const [summary] = of(records, 'daily_summary');
    expect(summary).toMatchObject({ external_id: 'daily_activity:2026-03-29', date: '2026-03-29', steps: 10412, active_energy_kcal: 412, distance_m: 8702, provider: 'oura', source: 'oura', body_worn: true });
    expect(summary!.metadata).toMatchObject({ timezone: '+03:00', score: 82, total_calories: 2291 });
    expect(summary!.metadata).not.toHaveProperty('class_5_min');
    expect(summary!.metadata).not.toHaveProperty('met');
    const steps = of(records, 'quantity').find((q) => q.type === 'step_count')!;
    expect(steps).toMatchObject({ value: 10412, unit: 'count', start_date: '2026-03-29T01:00:00.000Z', end_date: '2026-03-30T01:00:00.000Z', external_id: 'daily_activity:2026-03-29:steps' });
    expect(steps.metadata).toMatchObject({ timezone: '+03:00', original_value: 10412, original_unit: 'count' });
    expect(of(records, 'quantity').map((q) => q.type).sort()).toEqual(['active_energy_burned', 'step_count', 'total_energy_burned']);
  });

  it('sleep period: durations in seconds, the hypnogram as phases cut at bedtime_end, HRV as RMSSD samples without the null items, the main sleep\u2019s lowest heart rate as resting heart rate', async () => {
    const period = {
      id: '0b5f3f47-1a4e-4c3e-9c51-5a8b7e1d2f10',
      average_breath: 14.25,
      average_heart_rate: 54.6,
      average_hrv: 47,
      awake_time: 1200,
      // Summer time began at 03:00 local: the night starts at +02:00 and ends at +03:00.
      bedtime_end: '2026-03-29T07:08:30+03:00',
      bedtime_start: '2026-03-28T23:45:00+02:00',
      day: '2026-03-29',
      deep_sleep_duration: 5400,
      efficiency: 88,
      heart_rate: { interval: 300, items: [60, 58, null, 55], timestamp: '2026-03-28T23:45:00+02:00' },
      hrv: { interval: 300, items: [null, 41, 52, null], timestamp: '2026-03-28T23:45:00+02:00' },
      latency: 600,
      light_sleep_duration: 11400,
      low_battery_alert: false,
      lowest_heart_rate: 49,
      movement_30_sec: '1121',
      period: 0,
      readiness: null,
      readiness_score_delta: null,
      rem_sleep_duration: 4800,
      restless_periods: 120,
      sleep_phase_5_min: '44221133x4',
      sleep_score_delta: null,
      sleep_algorithm_version: 'v2',
      time_in_bed: 22770,
      total_sleep_duration: 21600,
      type: 'long_sleep',
    };
    const { records, rejected } = await decode(ouraConnector, 'sleep', { data: [period], next_token: null });
    expect(rejected).toEqual([]);
    const [s] = of(records, 'sleep_session');
    expect(s).toMatchObject({
      external_id: 'sleep:0b5f3f47-1a4e-4c3e-9c51-5a8b7e1d2f10',
      bedtime_start: '2026-03-28T21:45:00.000Z',
      bedtime_end: '2026-03-29T04:08:30.000Z',
      total_sleep_seconds: 21600,
      deep_sleep_seconds: 5400,
      rem_sleep_seconds: 4800,
      light_sleep_seconds: 11400,
      awake_seconds: 1200,
      hrv_avg_ms: 47,
      resting_hr: 49,
      respiratory_rate: 14.25,
      sleep_score: null,
    });
    expect(s!.metadata).toMatchObject({ timezone: '+02:00', end_timezone: '+03:00', hrv_kind: 'rmssd' });
    expect(s!.metadata).not.toHaveProperty('sleep_phase_5_min');
    // Five-minute runs; the unknown code "x" is a gap; the last phase ends at bedtime_end.
    expect(s!.phases).toEqual([
      { phase: 'awake', start_date: '2026-03-28T21:45:00.000Z', end_date: '2026-03-28T21:55:00.000Z' },
      { phase: 'light', start_date: '2026-03-28T21:55:00.000Z', end_date: '2026-03-28T22:05:00.000Z' },
      { phase: 'deep', start_date: '2026-03-28T22:05:00.000Z', end_date: '2026-03-28T22:15:00.000Z' },
      { phase: 'rem', start_date: '2026-03-28T22:15:00.000Z', end_date: '2026-03-28T22:25:00.000Z' },
      { phase: 'awake', start_date: '2026-03-28T22:30:00.000Z', end_date: '2026-03-28T22:35:00.000Z' },
    ]);
    const hrv = of(records, 'quantity').filter((q) => q.type === 'hrv_rmssd');
    expect(hrv.map((q) => [q.start_date, q.value, q.unit])).toEqual([
      ['2026-03-28T21:50:00.000Z', 41, 'ms'],
      ['2026-03-28T21:55:00.000Z', 52, 'ms'],
    ]);
    expect(of(records, 'quantity').some((q) => q.type === 'hrv_sdnn' || q.type === 'heart_rate')).toBe(false);
    expect(of(records, 'quantity').find((q) => q.type === 'resting_heart_rate')).toMatchObject({ value: 49, unit: 'count/min' });
  });

  it('sleep period: rest-mode and deleted periods are no sessions; a nap gives no resting heart rate; a period without bedtime_start is rejected alone', async () => {
    const base = { bedtime_start: '2026-11-20T14:00:00+02:00', bedtime_end: '2026-11-20T14:30:00+02:00', day: '2026-11-20', lowest_heart_rate: 58, average_breath: 15, sleep_phase_5_min: '422224' };
    const { records, rejected } = await decode(ouraConnector, 'sleep', {
      data: [
        { ...base, id: 'rest-1', type: 'rest' },
        { ...base, id: 'deleted-1', type: 'deleted' },
        { ...base, id: 'nap-1', type: 'late_nap', total_sleep_duration: null, light_sleep_duration: 1200, deep_sleep_duration: null, rem_sleep_duration: null },
        { ...base, id: 'broken-1', type: 'sleep', bedtime_start: null },
      ],
    });
    expect(records.map((r) => r.external_id)).toEqual(['sleep:nap-1']);
    expect(records[0]).toMatchObject({ total_sleep_seconds: 1200, deep_sleep_seconds: 0 });
    expect(rejected).toEqual([expect.objectContaining({ location: 'record 4', reason: 'Oura sleep broken-1: bedtime_start is missing' })]);
  });

  it('scores: the sleep score and readiness as nightly samples named by day; a day not scored yet gives nothing', async () => {
    const sleep = await decode(ouraConnector, 'daily_sleep', {
      data: [
        { id: 's1', contributors: { deep_sleep: 80 }, day: '2026-11-20', score: 77, timestamp: '2026-11-20T00:00:00+02:00' },
        { id: 's2', contributors: {}, day: '2026-11-21', score: null, timestamp: '2026-11-21T00:00:00+02:00' },
      ],
    });
    expect(sleep.records).toEqual([expect.objectContaining({ type: 'sleep_score', value: 77, unit: 'count', external_id: 'daily_sleep:2026-11-20', start_date: '2026-11-19T22:00:00.000Z' })]);
    const readiness = await decode(ouraConnector, 'daily_readiness', {
      data: [{ id: 'r1', contributors: { hrv_balance: 70 }, day: '2026-11-20', score: 84, temperature_deviation: -0.21, temperature_trend_deviation: 0.05, timestamp: '2026-11-20T00:00:00+02:00' }],
    });
    expect(readiness.records).toEqual([expect.objectContaining({ type: 'readiness_score', value: 84, external_id: 'daily_readiness:2026-11-20' })]);
    expect((readiness.records[0] as { metadata: Record<string, unknown> }).metadata).toMatchObject({ temperature_deviation: -0.21, timezone: '+02:00' });
    const bad = await decode(ouraConnector, 'daily_sleep', { data: [{ id: 's3', day: '2026-11-22', score: 140 }] });
    expect(bad.rejected[0]!.reason).toContain('outside 0..100');
  });

  it('SpO2: the night\u2019s average in %, nothing when Oura has no figure', async () => {
    const { records, rejected } = await decode(ouraConnector, 'daily_spo2', {
      data: [
        { id: 'o1', day: '2026-11-20', spo2_percentage: { average: 96.81 }, breathing_disturbance_index: 7 },
        { id: 'o2', day: '2026-11-21', spo2_percentage: null, breathing_disturbance_index: null },
      ],
    });
    expect(rejected).toEqual([]);
    expect(records).toEqual([expect.objectContaining({ type: 'oxygen_saturation', value: 96.81, unit: '%', external_id: 'daily_spo2:2026-11-20' })]);
    expect((records[0] as { metadata: Record<string, unknown> }).metadata).toMatchObject({ breathing_disturbance_index: 7 });
  });

  it('heart rate: UTC readings with no local offset recorded, Oura\u2019s source in metadata, an impossible bpm rejected alone', async () => {
    const { records, rejected } = await decode(ouraConnector, 'heartrate', {
      data: [
        { bpm: 57, source: 'sleep', timestamp: '2026-11-20T01:04:46+00:00' },
        { bpm: 612, source: 'awake', timestamp: '2026-11-20T09:09:46+00:00' },
        { bpm: 121, source: 'workout', timestamp: '2026-11-20T16:00:01+00:00' },
      ],
      next_token: 'abc',
    });
    expect(records.map((r) => (r.kind === 'quantity' ? [r.type, r.value, r.start_date, r.metadata.source, r.metadata.timezone] : null))).toEqual([
      ['heart_rate', 57, '2026-11-20T01:04:46.000Z', 'sleep', undefined],
      ['heart_rate', 121, '2026-11-20T16:00:01.000Z', 'workout', undefined],
    ]);
    expect(rejected).toEqual([expect.objectContaining({ location: 'record 2', reason: expect.stringContaining('bpm 612') })]);
  });

  it('workouts: Oura\u2019s activity names in either spelling, kcal and metres as sent, a manual entry not body-worn', async () => {
    const w = { calories: 310.5, day: '2026-11-20', distance: 5120.4, end_datetime: '2026-11-20T18:41:00-05:00', intensity: 'moderate', label: null, start_datetime: '2026-11-20T18:02:00-05:00' };
    const { records } = await decode(ouraConnector, 'workout', {
      data: [
        { ...w, id: 'w1', activity: 'running', source: 'autodetected' },
        { ...w, id: 'w2', activity: 'strengthTraining', source: 'confirmed', distance: null },
        { ...w, id: 'w3', activity: 'yoga', source: 'manual', calories: null, distance: null },
        { ...w, id: 'w4', activity: 'unicycling', source: 'confirmed' },
      ],
    });
    const workouts = of(records, 'workout');
    expect(workouts.map((x) => [x.external_id, x.type, x.body_worn])).toEqual([
      ['workout:w1', 'running', true],
      ['workout:w2', 'strength_training', true],
      ['workout:w3', 'yoga', false],
      ['workout:w4', 'other', true],
    ]);
    expect(workouts[0]).toMatchObject({ start_date: '2026-11-20T23:02:00.000Z', duration_s: 2340, active_energy_kcal: 310.5, distance_m: 5120.4 });
    expect(workouts[0]!.metadata).toMatchObject({ timezone: '-05:00', activity: 'running', intensity: 'moderate' });
    expect(workouts[3]!.metadata.activity).toBe('unicycling');
    expect(ouraActivity('strength_training')).toBe('strength_training');
  });

  it('activity names: every listed name reads as its canonical activity in camelCase or snake_case', () => {
    for (const [key, canonical] of OURA_ACTIVITIES) {
      expect(canonical).toMatch(/^[a-z][a-z_]*$/);
      expect(ouraActivity(key)).toBe(canonical);
      expect(ouraActivity(key.toUpperCase())).toBe(canonical);
    }
    expect(ouraActivity('strengthTraining')).toBe('strength_training');
    expect(ouraActivity('cross_country_skiing')).toBe('skiing');
  });

  it('personal info: weight and height as entered, dated when received, email not kept', async () => {
    const { records } = await decode(ouraConnector, 'personal_info', { id: 'p1', age: 41, weight: 74.2, height: 1.79, biological_sex: 'male', email: 'someone@example.com' }, '2026-11-20T08:30:00.000Z');
    expect(records).toEqual([
      expect.objectContaining({ type: 'body_mass', value: 74.2, unit: 'kg', start_date: '2026-11-20T08:30:00.000Z', external_id: 'personal_info:2026-11-20:weight', was_user_entered: true, body_worn: false }),
      expect.objectContaining({ type: 'height', value: 1.79, unit: 'm', external_id: 'personal_info:2026-11-20:height' }),
    ]);
    expect(JSON.stringify(records)).not.toContain('someone@example.com');
  });

  it('a body that is not JSON, lacks the data array, or has an unknown data type is one rejected item', async () => {
    const notJson = await ouraConnector.parser.parse(Buffer.from('<html>'), { provider: 'oura', receivedAt: '2026-11-20T00:00:00.000Z', dataType: 'sleep' });
    const items = [];
    for await (const i of notJson) items.push(i);
    expect(items).toEqual([{ rejected: expect.objectContaining({ location: 'body', reason: 'Oura sleep: the answer is not JSON' }) }]);
    expect((await decode(ouraConnector, 'sleep', { detail: 'oops' })).rejected[0]!.reason).toBe('Oura sleep: the answer has no "data" array');
    expect((await decode(ouraConnector, 'ring_configuration', { data: [] })).rejected[0]!.reason).toContain('unknown data type');
  });
});
