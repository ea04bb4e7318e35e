import { describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../../../commands/ingestion/records.js';
import { whoopConnector } from '../../../../src/sources/providers/whoop/pull.js';
import { WHOOP_SPORTS, whoopActivity } from '../../../../src/sources/providers/whoop/sports.js';
import { decode } from '../../shared/sandboxPull.js';

/**
 * Decoding WHOOP developer API v2 answers (issue 11 "Connectors for real providers",
 * docs/connectors/whoop.md): kilojoules to kcal, stage milliseconds to seconds, HRV typed as
 * RMSSD, `timezone_offset` kept, unscored and unfinished documents, bad documents rejected alone.
 */
const of = <K extends NormalizedRecord['kind']>(records: NormalizedRecord[], kind: K) => records.filter((r): r is Extract<NormalizedRecord, { kind: K }> => r.kind === kind);

const cycle = {
  id: 93845,
  user_id: 10129,
  created_at: '2026-11-20T04:25:44.774Z',
  updated_at: '2026-11-21T04:25:44.774Z',
  start: '2026-11-20T04:10:00.000Z',
  end: '2026-11-21T04:02:00.000Z',
  timezone_offset: '-05:00',
  score_state: 'SCORED',
  score: { strain: 12.6783, kilojoule: 8288.297, average_heart_rate: 68, max_heart_rate: 171 },
};

describe('WHOOP decoding', () => {
  it('cycle: a daily summary of the local day twelve hours after its start, its whole energy in kcal as total_energy_burned', async () => {
    const { records, rejected } = await decode(whoopConnector, 'cycle', { records: [cycle], next_token: 'MTIzOjEyMzEyMw' });
    expect(rejected).toEqual([]);
    const [s] = of(records, 'daily_summary');
    // 23:10 on 19 November in New York: the cycle is 20 November's.
    expect(s).toMatchObject({ external_id: 'cycle:93845', date: '2026-11-20', avg_heart_rate: 68, active_energy_kcal: null, provider: 'whoop', source: 'whoop', body_worn: true });
    expect(s!.metadata).toMatchObject({ strain: 12.6783, kilojoule: 8288.297, timezone: '-05:00', in_progress: false });
    // 1 kcal = 4.184 kJ.
    expect(s!.metadata.total_energy_kcal).toBeCloseTo(1980.9505, 3);
    const [energy] = of(records, 'quantity');
    expect(energy).toMatchObject({ type: 'total_energy_burned', unit: 'kcal', start_date: '2026-11-20T04:10:00.000Z', end_date: '2026-11-21T04:02:00.000Z' });
    expect(energy!.value).toBeCloseTo(1980.9505, 3);
    expect(energy!.metadata).toMatchObject({ original_value: 8288.297, original_unit: 'kJ' });
  });

  it('cycle: the open cycle is a summary marked in progress without an energy sample; an unscored cycle gives nothing', async () => {
    const { records } = await decode(whoopConnector, 'cycle', {
      records: [
        { ...cycle, id: 2, end: null, score: { ...cycle.score, strain: 4.1 } },
        { ...cycle, id: 3, score_state: 'PENDING_SCORE', score: undefined },
        { ...cycle, id: 4, score_state: 'UNSCORABLE' },
      ],
    });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ kind: 'daily_summary', external_id: 'cycle:2', metadata: { in_progress: true, end: null } });
  });

  it('recovery: recovery score, resting heart rate, HRV as RMSSD, SpO2 and skin temperature dated when scored; missing 4.0 figures left out', async () => {
    const rec = {
      cycle_id: 93845,
      sleep_id: 'ecfc6a15-4661-442f-a9a4-f160dd7afae8',
      user_id: 10129,
      created_at: '2026-11-21T11:25:44.774Z',
      updated_at: '2026-11-21T14:25:44.774Z',
      score_state: 'SCORED',
      score: { user_calibrating: false, recovery_score: 44, resting_heart_rate: 64, hrv_rmssd_milli: 31.813562, spo2_percentage: 95.6875, skin_temp_celsius: 33.7 },
    };
    const { records, rejected } = await decode(whoopConnector, 'recovery', {
      records: [rec, { ...rec, cycle_id: 2, score: { user_calibrating: true, recovery_score: 70, resting_heart_rate: 52, hrv_rmssd_milli: 80.1 } }, { ...rec, cycle_id: 3, score_state: 'PENDING_SCORE', score: undefined }],
    });
    expect(rejected).toEqual([]);
    expect(records.map((r) => (r.kind === 'quantity' ? [r.external_id, r.type, r.value, r.unit] : null))).toEqual([
      ['recovery:93845:readiness_score', 'readiness_score', 44, 'count'],
      ['recovery:93845:resting_heart_rate', 'resting_heart_rate', 64, 'count/min'],
      ['recovery:93845:hrv_rmssd', 'hrv_rmssd', 31.813562, 'ms'],
      ['recovery:93845:oxygen_saturation', 'oxygen_saturation', 95.6875, '%'],
      ['recovery:93845:sleeping_wrist_temperature', 'sleeping_wrist_temperature', 33.7, 'degC'],
      ['recovery:2:readiness_score', 'readiness_score', 70, 'count'],
      ['recovery:2:resting_heart_rate', 'resting_heart_rate', 52, 'count/min'],
      ['recovery:2:hrv_rmssd', 'hrv_rmssd', 80.1, 'ms'],
    ]);
    expect(records[0]).toMatchObject({ start_date: '2026-11-21T11:25:44.774Z', metadata: { sleep_id: rec.sleep_id, user_calibrating: false } });
    const bad = await decode(whoopConnector, 'recovery', { records: [{ ...rec, score: { ...rec.score, recovery_score: 130 } }] });
    expect(bad.rejected[0]!.reason).toContain('score.recovery_score 130 is outside 0..100');
  });

  it('sleep: stage milliseconds as seconds (slow wave is deep), sleep performance as the score, a nap without nightly samples', async () => {
    const sleep = {
      id: 'ecfc6a15-4661-442f-a9a4-f160dd7afae8',
      cycle_id: 93845,
      v1_id: 93845,
      user_id: 10129,
      created_at: '2026-11-21T11:25:44.774Z',
      updated_at: '2026-11-21T14:25:44.774Z',
      start: '2026-11-21T04:02:00.000Z',
      end: '2026-11-21T11:21:30.000Z',
      timezone_offset: '-05:00',
      nap: false,
      score_state: 'SCORED',
      score: {
        stage_summary: {
          total_in_bed_time_milli: 26_370_000,
          total_awake_time_milli: 2_100_500,
          total_no_data_time_milli: 0,
          total_light_sleep_time_milli: 12_600_000,
          total_slow_wave_sleep_time_milli: 5_400_000,
          total_rem_sleep_time_milli: 6_269_500,
          sleep_cycle_count: 4,
          disturbance_count: 12,
        },
        sleep_needed: { baseline_milli: 27_395_716, need_from_sleep_debt_milli: 352_230, need_from_recent_strain_milli: 208_595, need_from_recent_nap_milli: -12_312 },
        respiratory_rate: 16.11328125,
        sleep_performance_percentage: 98,
        sleep_consistency_percentage: 90,
        sleep_efficiency_percentage: 91.69533848,
      },
    };
    const { records, rejected } = await decode(whoopConnector, 'sleep', { records: [sleep, { ...sleep, id: 'nap-1', nap: true }, { ...sleep, id: 'pending-1', score_state: 'PENDING_SCORE', score: undefined }] });
    expect(rejected).toEqual([]);
    const sessions = of(records, 'sleep_session');
    expect(sessions.map((s) => s.external_id)).toEqual([`sleep:${sleep.id}`, 'sleep:nap-1']);
    expect(sessions[0]).toMatchObject({
      bedtime_start: '2026-11-21T04:02:00.000Z',
      bedtime_end: '2026-11-21T11:21:30.000Z',
      light_sleep_seconds: 12600,
      deep_sleep_seconds: 5400,
      rem_sleep_seconds: 6270,
      total_sleep_seconds: 24270,
      awake_seconds: 2101,
      sleep_score: 98,
      respiratory_rate: 16.11328125,
      hrv_avg_ms: null,
      phases: [],
    });
    expect(sessions[0]!.metadata).toMatchObject({ timezone: '-05:00', nap: false, in_bed_seconds: 26370, sleep_cycle_count: 4 });
    expect(of(records, 'quantity').map((q) => q.external_id)).toEqual([`sleep:${sleep.id}:sleep_score`, `sleep:${sleep.id}:respiratory_rate`]);
    const missing = await decode(whoopConnector, 'sleep', { records: [{ ...sleep, score: { ...sleep.score, stage_summary: null } }] });
    expect(missing.rejected[0]).toMatchObject({ location: 'record 1', reason: `WHOOP sleep ${sleep.id}: score.stage_summary is missing` });
  });

  it('workout: the sport by name or id, kJ as kcal, heart-rate zones as seconds; an unscored workout kept without figures', async () => {
    const w = {
      id: 'ecfc6a15-4661-442f-a9a4-f160dd7afae8',
      v1_id: 1043,
      user_id: 9012,
      created_at: '2026-11-20T23:40:00.000Z',
      updated_at: '2026-11-20T23:45:00.000Z',
      start: '2026-11-20T22:25:44.774Z',
      end: '2026-11-20T23:28:01.162Z',
      timezone_offset: '+05:30',
      sport_name: 'running',
      score_state: 'SCORED',
      score: {
        strain: 8.2463,
        average_heart_rate: 123,
        max_heart_rate: 146,
        kilojoule: 1569.34033203125,
        percent_recorded: 100,
        distance_meter: 1772.77035916,
        altitude_gain_meter: 46.64384460449,
        altitude_change_meter: -0.781372010707855,
        zone_durations: { zone_zero_milli: 300_000, zone_one_milli: 600_000, zone_two_milli: 900_000, zone_three_milli: 900_000, zone_four_milli: 600_000, zone_five_milli: 300_000 },
      },
      sport_id: 1,
    };
    const { records, rejected } = await decode(whoopConnector, 'workout', {
      records: [w, { ...w, id: 'w2', sport_name: undefined, sport_id: 48 }, { ...w, id: 'w3', score_state: 'PENDING_SCORE', score: undefined, sport_name: 'Hiking/Rucking' }],
    });
    expect(rejected).toEqual([]);
    const [a, b, c] = of(records, 'workout');
    // The name wins over the id (sport_id 1 is cycling).
    expect(a).toMatchObject({ external_id: `workout:${w.id}`, type: 'running', distance_m: 1772.77035916, avg_heart_rate: 123, max_heart_rate: 146, duration_s: 3736.388 });
    expect(a!.active_energy_kcal).toBeCloseTo(375.0813, 3);
    expect(a!.metadata).toMatchObject({ strain: 8.2463, timezone: '+05:30', heart_rate_zone_seconds: { zone_0: 300, zone_1: 600, zone_2: 900, zone_3: 900, zone_4: 600, zone_5: 300 } });
    expect(b!.type).toBe('cross_training');
    expect(c).toMatchObject({ type: 'hiking', active_energy_kcal: null, avg_heart_rate: null, metadata: { score_state: 'PENDING_SCORE' } });
    expect(whoopActivity(null, 9999)).toBe('other');
    expect(whoopActivity('Functional Fitness', null)).toBe('cross_training');
  });

  it('sports: every documented sport id and name reads as its canonical activity, a snake_case word', () => {
    for (const [id, name, canonical] of WHOOP_SPORTS) {
      expect(canonical).toMatch(/^[a-z][a-z_]*$/);
      expect(whoopActivity(name, null)).toBe(canonical);
      expect(whoopActivity(name.toLowerCase().replace(/[^a-z]+/g, '-'), null)).toBe(canonical);
      expect(whoopActivity(null, id)).toBe(canonical);
    }
  });

  it('body measurement: height and weight as entered, dated when received', async () => {
    const { records } = await decode(whoopConnector, 'body_measurement', { height_meter: 1.8288, weight_kilogram: 90.7185, max_heart_rate: 200 }, '2026-11-20T08:30:00.000Z');
    expect(records).toEqual([
      expect.objectContaining({ type: 'height', value: 1.8288, unit: 'm', external_id: 'body_measurement:2026-11-20:height', was_user_entered: true, body_worn: false }),
      expect.objectContaining({ type: 'body_mass', value: 90.7185, unit: 'kg', external_id: 'body_measurement:2026-11-20:weight' }),
    ]);
  });

  it('a bad offset, an end before the start and a missing score are rejected one document at a time', async () => {
    const { records, rejected } = await decode(whoopConnector, 'cycle', {
      records: [{ ...cycle, id: 1, timezone_offset: '+25:00' }, { ...cycle, id: 2, end: '2026-11-19T00:00:00.000Z' }, { ...cycle, id: 3, score: null }, cycle],
    });
    expect(records.map((r) => r.external_id)).toEqual(['cycle:93845', 'cycle:93845:total_energy']);
    expect(rejected.map((r) => [r.location, r.reason])).toEqual([
      ['record 1', 'WHOOP cycle 1: "+25:00" is not a zone offset such as "+01:00"'],
      ['record 2', 'WHOOP cycle 2: end is before start'],
      ['record 3', 'WHOOP cycle 3: score_state is SCORED but score is missing'],
    ]);
  });
});
