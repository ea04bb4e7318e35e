import { describe, expect, it } from 'vitest';
import { isoDurationSeconds } from '../../../../src/sources/providers/polar/isoDuration.js';
import { polarConnector } from '../../../../src/sources/providers/polar/pull.js';
import { RecordError } from '../../../../src/sources/shared/connectorRecords.js';
import { decode } from '../../shared/sandboxPull.js';

/**
 * Polar decoding (issue 11 "Connectors for real providers": Polar AccessLink; ISO 8601
 * durations, local times with offsets, HRV as RMSSD; docs/connectors/polar.md).
 */
describe('Polar exercises', () => {
  const exercise = {
    id: 1937529874,
    'upload-time': '2026-03-29T18:40:02.000Z',
    'polar-user': 'https://www.polaraccesslink.com/v3/users/1',
    'transaction-id': 179879,
    device: 'Polar Vantage V2',
    'start-time': '2026-03-29T20:10:00',
    'start-time-utc-offset': 180,
    duration: 'PT1H2M3.5S',
    calories: 530,
    distance: 10600.2,
    'heart-rate': { average: 141, maximum: 168 },
    sport: 'RUNNING',
    'detailed-sport-info': 'TREADMILL_RUNNING',
  };

  it('places local start-time with its offset in minutes, reads the ISO 8601 duration, maps the detailed sport', async () => {
    const { records, rejected } = await decode(polarConnector, 'exercises', exercise);
    expect(rejected).toEqual([]);
    expect(records[0]).toMatchObject({
      kind: 'workout', external_id: 'exercise-1937529874', type: 'treadmill_running', start_date: '2026-03-29T17:10:00.000Z', end_date: '2026-03-29T18:12:03.500Z', duration_s: 3723.5,
      active_energy_kcal: 530, distance_m: 10600.2, avg_heart_rate: 141, max_heart_rate: 168, device: 'Polar Vantage V2', body_worn: true, source: 'polar',
    });
    expect(records[0]!.metadata).toMatchObject({ timezone: '+03:00', sport: 'RUNNING' });
    // How it was delivered is not part of the record: another transaction decodes the same.
    expect(records[0]!.metadata['transaction-id']).toBeUndefined();
  });

  it('falls back to the sport family, then other; rejects an exercise without its offset', async () => {
    const family = await decode(polarConnector, 'exercises', { ...exercise, 'detailed-sport-info': 'SOMETHING_NEW', sport: 'CYCLING' });
    expect(family.records[0]).toMatchObject({ type: 'cycling' });
    const unknown = await decode(polarConnector, 'exercises', { ...exercise, 'detailed-sport-info': null, sport: 'OTHER' });
    expect(unknown.records[0]).toMatchObject({ type: 'other' });
    const { ['start-time-utc-offset']: _gone, ...noOffset } = exercise;
    const rejected = await decode(polarConnector, 'exercises', noOffset);
    expect(rejected.records).toEqual([]);
    expect(rejected.rejected[0]!.reason).toMatch(/start-time-utc-offset/);
  });

  it('reads heart rate samples recording-rate seconds apart from the exercise start, 0 as a gap; other sample types give nothing', async () => {
    const samples = { 'recording-rate': 5, 'sample-type': '0', data: '0,100,102,0,110' };
    const ex = { id: 7, 'start-time': '2026-11-20T18:00:00', 'start-time-utc-offset': 120, device: 'Polar H10' };
    const { records } = await decode(polarConnector, 'exercises', { exercise: ex, samples });
    expect(records.map((r) => r.kind === 'quantity' && [r.start_date, r.value])).toEqual([
      ['2026-11-20T16:00:05.000Z', 100],
      ['2026-11-20T16:00:10.000Z', 102],
      ['2026-11-20T16:00:20.000Z', 110],
    ]);
    expect(records[0]).toMatchObject({ type: 'heart_rate', unit: 'count/min', external_id: 'exercise-7-hr-1', device: 'Polar H10' });
    const altitude = await decode(polarConnector, 'exercises', { exercise: ex, samples: { ...samples, 'sample-type': '3' } });
    expect(altitude.records).toEqual([]);
  });
});

describe('Polar nights and Nightly Recharge', () => {
  const night = {
    polar_user: 'https://www.polaraccesslink.com/v3/users/1',
    date: '2026-11-20',
    sleep_start_time: '2026-11-19T23:39:07+02:00',
    sleep_end_time: '2026-11-20T07:19:37+02:00',
    device_id: '1111AAAA',
    light_sleep: 14000,
    deep_sleep: 5400,
    rem_sleep: 5200,
    unrecognized_sleep_stage: 300,
    sleep_score: 80,
    total_interruption_duration: 2700,
    hypnogram: { '23:39': 2, '23:50': 4, '00:30': 3, '01:23': 1, '07:00': 0 },
    heart_rate_samples: { '23:41': 66, '00:46': 0, '03:01': 52 },
  };

  it('reads a night: offsets kept, durations in seconds, the hypnogram as phases across midnight, heart rate samples', async () => {
    const { records, rejected } = await decode(polarConnector, 'sleep', { nights: [night] });
    expect(rejected).toEqual([]);
    const session = records[0]!;
    expect(session).toMatchObject({
      kind: 'sleep_session', external_id: 'sleep-2026-11-20', bedtime_start: '2026-11-19T21:39:07.000Z', bedtime_end: '2026-11-20T05:19:37.000Z',
      total_sleep_seconds: 24900, light_sleep_seconds: 14000, deep_sleep_seconds: 5400, rem_sleep_seconds: 5200, awake_seconds: 2700, sleep_score: 80, hrv_avg_ms: null,
    });
    expect(session.kind === 'sleep_session' && session.phases).toEqual([
      { phase: 'light', start_date: '2026-11-19T21:39:07.000Z', end_date: '2026-11-19T21:50:00.000Z' },
      { phase: 'deep', start_date: '2026-11-19T21:50:00.000Z', end_date: '2026-11-19T22:30:00.000Z' },
      { phase: 'light', start_date: '2026-11-19T22:30:00.000Z', end_date: '2026-11-19T23:23:00.000Z' },
      { phase: 'rem', start_date: '2026-11-19T23:23:00.000Z', end_date: '2026-11-20T05:00:00.000Z' },
      { phase: 'awake', start_date: '2026-11-20T05:00:00.000Z', end_date: '2026-11-20T05:19:37.000Z' },
    ]);
    expect(session.metadata.timezone).toBe('+02:00');
    const hr = records.filter((r) => r.kind === 'quantity');
    // 0 is no reading; 03:01 is on the 20th.
    expect(hr.map((r) => r.kind === 'quantity' && [r.start_date, r.value])).toEqual([['2026-11-19T21:41:00.000Z', 66], ['2026-11-20T01:01:00.000Z', 52]]);
  });

  it('rejects a night whose hypnogram names an unknown stage, keeping the others', async () => {
    const { records, rejected } = await decode(polarConnector, 'sleep', { nights: [{ ...night, hypnogram: { '23:39': 9 } }, { ...night, date: '2026-11-21', sleep_start_time: '2026-11-20T23:00:00+02:00', sleep_end_time: '2026-11-21T07:00:00+02:00' }] });
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toMatch(/not a Polar sleep stage/);
    expect(records.filter((r) => r.kind === 'sleep_session')).toHaveLength(1);
  });

  it('reads Nightly Recharge HRV as RMSSD and breathing over the night’s samples, placed with the night’s offset; no offset known is a rejection', async () => {
    const recharge = {
      polar_user: 'https://www.polaraccesslink.com/v3/users/1',
      date: '2026-11-20',
      heart_rate_avg: 56,
      beat_to_beat_avg: 1071,
      heart_rate_variability_avg: 41,
      breathing_rate_avg: 14.1,
      nightly_recharge_status: 4,
      hrv_samples: { '23:45': 38, '02:10': 44, '06:55': 40 },
      breathing_samples: { '23:44': 13.9, '06:54': 14.3 },
    };
    const { records, rejected } = await decode(polarConnector, 'nightly_recharge', { offsets: { '2026-11-20': '+02:00' }, answer: { recharges: [recharge, { ...recharge, date: '2026-11-18' }] } });
    expect(records.map((r) => r.kind === 'quantity' && [r.type, r.value, r.start_date, r.end_date])).toEqual([
      ['hrv_rmssd', 41, '2026-11-19T21:45:00.000Z', '2026-11-20T04:55:00.000Z'],
      ['respiratory_rate', 14.1, '2026-11-19T21:44:00.000Z', '2026-11-20T04:54:00.000Z'],
    ]);
    expect(records[0]).toMatchObject({ unit: 'ms', external_id: 'recharge-2026-11-20-hrv' });
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toMatch(/no zone offset is known for the night of 2026-11-18/);
  });
});

describe('Polar daily activity, physical information, continuous heart rate', () => {
  it('reads a day of activity as a daily summary (active steps and calories) and its step samples with the day’s offset', async () => {
    const day = { id: 1234, 'polar-user': 'x', 'transaction-id': 5, date: '2026-11-20', created: '2026-11-20T22:30:00.000Z', calories: 2329, 'active-calories': 428, duration: 'PT2H44M', 'active-steps': 9250 };
    const { records } = await decode(polarConnector, 'activities', day);
    expect(records[0]).toMatchObject({ kind: 'daily_summary', external_id: 'activity-2026-11-20', date: '2026-11-20', steps: 9250, active_energy_kcal: 428 });
    expect(records[0]!.metadata).toMatchObject({ calories: 2329, active_seconds: 9840 });
    const steps = await decode(polarConnector, 'activities', { date: '2026-11-20', offset: '+02:00', answer: { date: '2026-11-20', interval: 15, samples: [{ steps: 0, time: '00:00:00.000' }, { steps: 312, time: '08:15:00.000' }] } });
    expect(steps.records).toHaveLength(1);
    expect(steps.records[0]).toMatchObject({ type: 'step_count', value: 312, start_date: '2026-11-20T06:15:00.000Z', end_date: '2026-11-20T06:30:00.000Z' });
    const unplaced = await decode(polarConnector, 'activities', { date: '2026-11-20', offset: null, answer: { samples: [{ steps: 5, time: '08:00:00.000' }] } });
    expect(unplaced.rejected[0]!.reason).toMatch(/no zone offset is known/);
  });

  it('reads physical information: weight in kg, height in cm to m, resting heart rate and VO2max, user-entered unless measured', async () => {
    const { records } = await decode(polarConnector, 'physical_information', { id: 9, created: '2026-11-10T10:00:00.000Z', weight: 80.5, height: 180, 'resting-heart-rate': 52, 'vo2-max': 48, 'maximum-heart-rate': 189, 'weight-source': 'SOURCE_MEASURED' });
    const byType = Object.fromEntries(records.map((r) => [r.kind === 'quantity' ? r.type : r.kind, r]));
    expect(byType.body_mass).toMatchObject({ value: 80.5, unit: 'kg', was_user_entered: false, body_worn: false });
    expect(byType.height).toMatchObject({ value: 1.8, unit: 'm', was_user_entered: true });
    expect(byType.resting_heart_rate).toMatchObject({ value: 52, unit: 'count/min' });
    expect(byType.vo2_max).toMatchObject({ value: 48 });
  });

  it('reads continuous heart rate with the day’s offset (summer time in July)', async () => {
    const { records } = await decode(polarConnector, 'continuous_heart_rate', { offset: '+03:00', answer: { polar_user: 'x', date: '2026-07-01', heart_rate_samples: [{ heart_rate: 63, sample_time: '00:02:08' }, { heart_rate: 0, sample_time: '00:07:08' }] } });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ type: 'heart_rate', value: 63, start_date: '2026-06-30T21:02:08.000Z', metadata: expect.objectContaining({ timezone: '+03:00' }) });
  });

  it('reads ISO 8601 durations and refuses what is not one', () => {
    expect(isoDurationSeconds('PT2H44M45S', 'd')).toBe(9885);
    expect(isoDurationSeconds('PT45.5S', 'd')).toBe(45.5);
    expect(isoDurationSeconds('P1DT2H', 'd')).toBe(93600);
    expect(isoDurationSeconds('PT0S', 'd')).toBe(0);
    for (const bad of ['PT', 'P', '1H', 'P1Y', 'PT1H2', 12]) expect(() => isoDurationSeconds(bad, 'd')).toThrow(RecordError);
  });
});
