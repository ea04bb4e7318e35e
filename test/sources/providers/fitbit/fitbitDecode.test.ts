import { describe, expect, it } from 'vitest';
import type { NormalizedRecord, RejectedItem } from '../../../../commands/ingestion/records.js';
import { wrapAnswer, type ProfileZone } from '../../../../src/sources/providers/fitbit/fitbitPayload.js';
import { fitbitParser } from '../../../../src/sources/providers/fitbit/parser.js';

/**
 * Fitbit decoding (issue 11 "Connectors for real providers"; docs/connectors/fitbit.md): local
 * times read in the profile's zone (summer and winter time), HRV typed as RMSSD, short wakes cut
 * sleep stages, kilometres and miles to metres, nights without a value skipped, bad logs rejected alone.
 */
const PARIS: ProfileZone = { timezone: 'Europe/Paris', offsetFromUTCMillis: 3_600_000 };

async function decode(dataType: string, answer: unknown, zone: ProfileZone = PARIS, date?: string) {
  const records: NormalizedRecord[] = [];
  const rejected: RejectedItem[] = [];
  const body = wrapAnswer(zone, Buffer.from(JSON.stringify(answer)), date);
  for await (const item of fitbitParser.parse(body, { provider: 'fitbit', receivedAt: '2026-11-23T10:00:00.000Z', dataType })) {
    if ('record' in item) records.push(item.record);
    else rejected.push(item.rejected);
  }
  return { records, rejected };
}

const q = (r: NormalizedRecord) => (r.kind === 'quantity' ? r : null)!;

describe('Fitbit decoding', () => {
  it('reads intraday minutes in the zone in force that day: the March change moves the offset from +01:00 to +02:00', async () => {
    const answer = {
      'activities-heart': [{ dateTime: '2026-03-29', value: { heartRateZones: [], restingHeartRate: 55 } }],
      'activities-heart-intraday': { dataset: [{ time: '01:59:00', value: 52 }, { time: '03:00:00', value: 54 }], datasetInterval: 1, datasetType: 'minute' },
    };
    const { records, rejected } = await decode('heart_intraday', answer);
    expect(rejected).toEqual([]);
    const [resting, before, after] = records.map(q);
    expect(resting).toMatchObject({ type: 'resting_heart_rate', value: 55, start_date: '2026-03-28T23:00:00.000Z', end_date: '2026-03-29T22:00:00.000Z', external_id: 'resting_heart_rate:2026-03-29' });
    expect(before).toMatchObject({ type: 'heart_rate', value: 52, unit: 'count/min', start_date: '2026-03-29T00:59:00.000Z', end_date: '2026-03-29T01:00:00.000Z', metadata: { utc_offset: '+01:00' } });
    expect(after).toMatchObject({ start_date: '2026-03-29T01:00:00.000Z', metadata: { timezone: 'Europe/Paris', utc_offset: '+02:00' } });
  });

  it('uses the profile’s fixed offset when the zone name is unknown, and keeps external ids in local time', async () => {
    const answer = { 'activities-steps': [{ dateTime: '2026-11-20', value: '96' }], 'activities-steps-intraday': { dataset: [{ time: '08:00:00', value: 0 }, { time: '08:01:00', value: 96 }], datasetInterval: 1 } };
    const { records } = await decode('steps_intraday', answer, { timezone: 'Mars/Olympus', offsetFromUTCMillis: -5 * 3_600_000 });
    // The minute without steps is no sample.
    expect(records.map(q)).toEqual([
      expect.objectContaining({ external_id: 'step_count:2026-11-20T08:01:00', type: 'step_count', value: 96, unit: 'count', start_date: '2026-11-20T13:01:00.000Z', end_date: '2026-11-20T13:02:00.000Z', metadata: expect.objectContaining({ timezone: '-05:00' }) }),
    ]);
  });

  it('cuts stage stretches with the short wakes inside them, and sums phases into the session', async () => {
    const answer = {
      sleep: [
        {
          logId: 4711,
          dateOfSleep: '2026-11-20',
          startTime: '2026-11-19T23:00:00.000',
          endTime: '2026-11-20T01:00:00.000',
          type: 'stages',
          isMainSleep: true,
          minutesAsleep: 105,
          levels: {
            data: [
              { dateTime: '2026-11-19T23:00:00.000', level: 'wake', seconds: 600 },
              { dateTime: '2026-11-19T23:10:00.000', level: 'light', seconds: 1800 },
              { dateTime: '2026-11-19T23:40:00.000', level: 'deep', seconds: 2400 },
              { dateTime: '2026-11-20T00:20:00.000', level: 'rem', seconds: 2400 },
            ],
            shortData: [{ dateTime: '2026-11-19T23:20:00.000', level: 'wake', seconds: 60 }],
          },
        },
      ],
    };
    const { records, rejected } = await decode('sleep', answer);
    expect(rejected).toEqual([]);
    const s = records[0]!;
    if (s.kind !== 'sleep_session') throw new Error(s.kind);
    expect(s).toMatchObject({ external_id: 'sleep:4711', bedtime_start: '2026-11-19T22:00:00.000Z', bedtime_end: '2026-11-20T00:00:00.000Z', deep_sleep_seconds: 2400, rem_sleep_seconds: 2400, light_sleep_seconds: 1740, awake_seconds: 660, total_sleep_seconds: 6540, body_worn: true });
    expect(s.phases.map((p) => p.phase)).toEqual(['awake', 'light', 'awake', 'light', 'deep', 'rem']);
    expect(s.phases[2]).toEqual({ phase: 'awake', start_date: '2026-11-19T22:20:00.000Z', end_date: '2026-11-19T22:21:00.000Z' });
  });

  it('reads a classic sleep log: restless and awake minutes are not sleep', async () => {
    const answer = { sleep: [{ logId: 8, startTime: '2026-11-20T01:00:00.000', endTime: '2026-11-20T02:00:00.000', type: 'classic', levels: { data: [{ dateTime: '2026-11-20T01:00:00.000', level: 'asleep', seconds: 2400 }, { dateTime: '2026-11-20T01:40:00.000', level: 'restless', seconds: 600 }, { dateTime: '2026-11-20T01:50:00.000', level: 'awake', seconds: 600 }] } }] };
    const [s] = (await decode('sleep', answer)).records;
    expect(s).toMatchObject({ total_sleep_seconds: 2400, awake_seconds: 1200, deep_sleep_seconds: 0 });
  });

  it('types Fitbit HRV as RMSSD (never SDNN), skips nights without a value, reads SpO2 as a bare array or one object', async () => {
    const hrv = await decode('hrv', { hrv: [{ value: { dailyRmssd: 34.938, deepRmssd: 31.567 }, dateTime: '2026-11-20' }, { value: {}, dateTime: '2026-11-21' }] });
    expect(hrv.records.map(q)).toEqual([expect.objectContaining({ type: 'hrv_rmssd', value: 34.938, unit: 'ms', external_id: 'hrv_rmssd:2026-11-20', metadata: expect.objectContaining({ deep_rmssd_ms: 31.567 }) })]);
    const range = await decode('spo2', [{ dateTime: '2026-11-20', value: { avg: 96.2, min: 93, max: 99 } }]);
    const single = await decode('spo2', { dateTime: '2026-11-20', value: { avg: 96.2, min: 93, max: 99 } });
    expect(range.records).toEqual(single.records);
    expect(q(range.records[0]!)).toMatchObject({ type: 'oxygen_saturation', value: 96.2, unit: '%' });
    const br = await decode('breathing_rate', { br: [{ value: { breathingRate: 15.2 }, dateTime: '2026-11-20' }] });
    expect(q(br.records[0]!)).toMatchObject({ type: 'respiratory_rate', value: 15.2, unit: 'count/min' });
  });

  it('reads body logs: Aria scale readings are measured, Web entries typed in; BMI beside weight', async () => {
    const { records } = await decode('weight', { weight: [{ bmi: 22.7, date: '2026-11-20', logId: 1, source: 'Aria', time: '07:45:12', weight: 72.1 }, { date: '2026-11-21', logId: 2, source: 'Web', time: '21:00:00', weight: 71.8 }] });
    expect(records.map((r) => [q(r).type, q(r).value, q(r).device, q(r).was_user_entered, q(r).start_date])).toEqual([
      ['body_mass', 72.1, 'Aria', false, '2026-11-20T06:45:12.000Z'],
      ['body_mass_index', 22.7, 'Aria', false, '2026-11-20T06:45:12.000Z'],
      ['body_mass', 71.8, null, true, '2026-11-21T20:00:00.000Z'],
    ]);
    const fat = await decode('body_fat', { fat: [{ date: '2026-11-20', fat: 19.4, logId: 1, source: 'Aria', time: '07:45:12' }, { date: '2026-11-20', fat: 140, logId: 3, time: '08:00:00' }] });
    expect(fat.records.map((r) => q(r).value)).toEqual([19.4]);
    expect(fat.rejected).toEqual([expect.objectContaining({ location: 'fat[1]', reason: expect.stringContaining('not plausible') })]);
  });

  it('reads activity logs with their own offsets, miles to metres, unknown activities as other', async () => {
    const { records, rejected } = await decode('activity_logs', {
      activities: [
        { logId: 11, activityName: 'Run', activityTypeId: 90009, logType: 'auto_detected', startTime: '2026-07-01T18:00:00.000+02:00', duration: 1_800_000, activeDuration: 1_740_000, calories: 350, distance: 3.1, distanceUnit: 'Mile', steps: 5000, averageHeartRate: 152, source: { type: 'tracker', name: 'Charge 6' } },
        { logId: 12, activityName: 'Underwater Hockey', logType: 'manual', startTime: '2026-07-02T10:00:00.000-04:00', duration: 3_600_000 },
        { logId: 13, activityName: 'Run', startTime: '2026-07-03T10:00:00.000', duration: 60_000 },
      ],
      pagination: { next: '' },
    });
    expect(records[0]).toMatchObject({ kind: 'workout', external_id: 'activity:11', type: 'running', start_date: '2026-07-01T16:00:00.000Z', end_date: '2026-07-01T16:30:00.000Z', duration_s: 1740, distance_m: 4989, active_energy_kcal: 350, avg_heart_rate: 152, steps: 5000, device: 'Charge 6', body_worn: true });
    expect(records[0]).toMatchObject({ metadata: { timezone: 'Europe/Paris', utc_offset: '+02:00' } });
    expect(records[1]).toMatchObject({ type: 'other', device: null, body_worn: false, metadata: { manual: true, activity_name: 'Underwater Hockey', timezone: '-04:00' } });
    expect(rejected).toEqual([expect.objectContaining({ location: 'activities[2]', reason: expect.stringContaining('offset') })]);
  });

  it('reads the daily summary of the date the envelope names: active energy above the basal rate, kilometres to metres', async () => {
    const answer = { activities: [], summary: { steps: 9012, caloriesOut: 2400, caloriesBMR: 1650, activityCalories: 900, distances: [{ activity: 'total', distance: 6.45 }], restingHeartRate: 56 } };
    const { records } = await decode('activity_summary', answer, PARIS, '2026-11-20');
    expect(records).toEqual([expect.objectContaining({ kind: 'daily_summary', external_id: 'daily:2026-11-20', date: '2026-11-20', steps: 9012, active_energy_kcal: 750, distance_m: 6450, resting_heart_rate: 56 })]);
  });

  it('rejects a payload that is not a Fitbit answer, and a data type the connector does not store, as one item each', async () => {
    const out: unknown[] = [];
    for await (const item of fitbitParser.parse(Buffer.from('<html>'), { provider: 'fitbit', receivedAt: '2026-11-23T10:00:00.000Z', dataType: 'sleep' })) out.push(item);
    for await (const item of fitbitParser.parse(Buffer.from('{}'), { provider: 'fitbit', receivedAt: '2026-11-23T10:00:00.000Z', dataType: 'nutrition' })) out.push(item);
    expect(out).toEqual([{ rejected: expect.objectContaining({ reason: 'the payload is not JSON' }) }, { rejected: expect.objectContaining({ reason: expect.stringContaining('nutrition') }) }]);
  });
});
