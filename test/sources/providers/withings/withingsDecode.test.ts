import { describe, expect, it } from 'vitest';
import { withingsConnector } from '../../../../src/sources/providers/withings/pull.js';
import { decode } from '../../shared/sandboxPull.js';

/**
 * Withings decoding (issue 11 "Connectors for real providers": Withings measure, sleep,
 * activity; `value × 10^unit`; docs/connectors/withings.md).
 */
const answer = (body: unknown) => ({ status: 0, body });

describe('Withings measures', () => {
  it('reads value × 10^unit in the catalog storage unit and keeps the value as sent', async () => {
    const { records, rejected } = await decode(withingsConnector, 'measure', answer({
      updatetime: 1_763_600_000,
      timezone: 'Europe/Paris',
      measuregrps: [
        { grpid: 501, attrib: 0, date: 1_763_622_300, category: 1, measures: [{ value: 72450, type: 1, unit: -3 }, { value: 1875, type: 6, unit: -2 }, { value: 3685, type: 71, unit: -2 }, { value: 12, type: 88, unit: -1 }] },
      ],
      more: 0,
      offset: 0,
    }));
    expect(rejected).toEqual([]);
    const byType = Object.fromEntries(records.map((r) => [r.kind === 'quantity' ? r.type : r.kind, r]));
    expect(byType.body_mass).toMatchObject({ value: 72.45, unit: 'kg', start_date: '2025-11-20T07:05:00.000Z', external_id: 'meas-501-1', source: 'withings', provider: 'withings', body_worn: false });
    expect(byType.body_fat_percentage).toMatchObject({ value: 18.75, unit: '%' });
    expect(byType.body_temperature).toMatchObject({ value: 36.85, unit: 'degC', metadata: expect.objectContaining({ timezone: 'Europe/Paris', original_value: 36.85 }) });
    // Bone mass (88) has no catalog type and is not a record.
    expect(records).toHaveLength(3);
  });

  it('turns systolic and diastolic of one group into a blood pressure observation beside the samples; heart pulse is heart_rate', async () => {
    const { records } = await decode(withingsConnector, 'measure', answer({
      measuregrps: [{ grpid: 77, attrib: 2, date: 1_763_670_600, category: 1, timezone: 'America/New_York', measures: [{ value: 121, type: 10, unit: 0 }, { value: 79, type: 9, unit: 0 }, { value: 64, type: 11, unit: 0 }] }],
      more: 0,
      offset: 0,
    }));
    const bp = records.find((r) => r.kind === 'observation');
    expect(bp).toMatchObject({ code: 'blood_pressure', external_id: 'meas-77-bp', components: [{ code: 'systolic', value: 121, unit: 'mmHg' }, { code: 'diastolic', value: 79, unit: 'mmHg' }] });
    expect(bp?.metadata.timezone).toBe('America/New_York');
    const hr = records.find((r) => r.kind === 'quantity' && r.type === 'heart_rate');
    // attrib 2: typed in by the user.
    expect(hr).toMatchObject({ value: 64, unit: 'count/min', was_user_entered: true });
  });

  it('gives nothing for goals (category 2) and rejects an implausible value alone', async () => {
    const { records, rejected } = await decode(withingsConnector, 'measure', answer({
      measuregrps: [
        { grpid: 1, date: 1_763_622_300, category: 2, measures: [{ value: 70, type: 1, unit: 0 }] },
        { grpid: 2, date: 1_763_622_300, category: 1, measures: [{ value: 72, type: 1, unit: 3 }] },
        { grpid: 3, date: 1_763_622_300, category: 1, measures: [{ value: 97, type: 54, unit: 0 }] },
      ],
      more: 0,
    }));
    expect(records.map((r) => r.external_id)).toEqual(['meas-3-54']);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toMatch(/body_mass 72000 kg is outside/);
  });

  it('rejects a stored answer that carries an error status as one item', async () => {
    const { records, rejected } = await decode(withingsConnector, 'measure', { status: 601, error: 'Too many requests' });
    expect(records).toEqual([]);
    expect(rejected[0]!.reason).toMatch(/status 601/);
  });
});

describe('Withings activity, sleep and workouts', () => {
  it('reads a day of activity as a daily summary in the day’s zone, marked in progress while the day runs', async () => {
    const day = { date: '2026-11-20', timezone: 'Europe/Paris', is_tracker: true, steps: 8412, distance: 6120.5, calories: 312.4, totalcalories: 2102.1, hr_average: 71, elevation: 12 };
    const { records } = await decode(withingsConnector, 'activity', answer({ activities: [day, { ...day, date: '2026-11-19', hr_average: 0 }], more: false, offset: 0 }), '2026-11-20T21:00:00.000Z');
    expect(records[0]).toMatchObject({ kind: 'daily_summary', external_id: 'activity-2026-11-20', date: '2026-11-20', steps: 8412, active_energy_kcal: 312.4, distance_m: 6120.5, avg_heart_rate: 71, body_worn: true });
    expect(records[0]!.metadata).toMatchObject({ in_progress: true, totalcalories: 2102.1, timezone: 'Europe/Paris' });
    // hr_average 0 means no reading; yesterday is complete.
    expect(records[1]).toMatchObject({ avg_heart_rate: null });
    expect(records[1]!.metadata.in_progress).toBeUndefined();
    // 23:30 UTC is already the 21st in Paris: the 20th is then complete.
    const later = await decode(withingsConnector, 'activity', answer({ activities: [day] }), '2026-11-20T23:30:00.000Z');
    expect(later.records[0]!.metadata.in_progress).toBeUndefined();
  });

  it('reads sleep summaries as sessions (durations in seconds, lowest heart rate as resting) and get states as sleep_analysis samples', async () => {
    const summary = {
      id: 9001, timezone: 'Europe/Paris', model: 32, startdate: 1_774_821_600, enddate: 1_774_850_400, date: '2026-03-30',
      data: { total_sleep_time: 25200, lightsleepduration: 13200, deepsleepduration: 6000, remsleepduration: 6000, wakeupduration: 1800, sleep_score: 81, hr_min: 49, hr_average: 56, rr_average: 14 },
    };
    const { records } = await decode(withingsConnector, 'sleep', answer({ series: [summary], more: false, offset: 0 }));
    expect(records[0]).toMatchObject({
      kind: 'sleep_session', external_id: 'sleep-9001', total_sleep_seconds: 25200, deep_sleep_seconds: 6000, rem_sleep_seconds: 6000, light_sleep_seconds: 13200, awake_seconds: 1800,
      sleep_score: 81, resting_hr: 49, respiratory_rate: 14, hrv_avg_ms: null, device: 'Withings Sleep Analyzer', body_worn: false,
      // Across the spring-forward night of 2026-03-29/30 the epoch times stay exact.
      bedtime_start: '2026-03-29T22:00:00.000Z', bedtime_end: '2026-03-30T06:00:00.000Z',
    });
    const states = await decode(withingsConnector, 'sleep', answer({ series: [{ startdate: 1_774_821_600, enddate: 1_774_822_500, state: 0, model: 32 }, { startdate: 1_774_822_500, enddate: 1_774_824_300, state: 2, model: 32 }, { startdate: 1_774_824_300, enddate: 1_774_825_000, state: 9 }], model: 32 }));
    expect(states.records.map((r) => r.kind === 'category' && r.value)).toEqual(['awake', 'asleep_deep']);
    expect(states.rejected[0]!.reason).toMatch(/state 9/);
    const withRates = await decode(withingsConnector, 'sleep', answer({ series: [{ startdate: 1_774_821_600, enddate: 1_774_822_500, state: 1, hr: { '1774821600': 55, '1774822200': 0 }, rr: { '1774821600': 14 } }] }));
    expect(withRates.records.map((r) => r.kind === 'quantity' ? [r.type, r.value, r.start_date] : r.kind)).toEqual(['category', ['heart_rate', 55, '2026-03-29T22:00:00.000Z'], ['respiratory_rate', 14, '2026-03-29T22:00:00.000Z']]);
  });

  it('reads workouts: category to activity, effective duration, 0 heart rate as unknown, manual values only where nothing was measured', async () => {
    const { records } = await decode(withingsConnector, 'workouts', answer({
      series: [
        { id: 42, category: 2, timezone: 'Europe/Paris', startdate: 1_763_658_000, enddate: 1_763_660_400, data: { calories: 310, distance: 6400, effduration: 2280, hr_average: 148, hr_max: 171, steps: 5800, pause_duration: 120 } },
        { id: 43, category: 16, startdate: 1_763_744_400, enddate: 1_763_747_100, data: { calories: 0, manual_calories: 220, distance: 0, hr_average: 0, hr_max: 0 } },
        { id: 44, category: 999, startdate: 1_763_744_400, enddate: 1_763_745_000 },
      ],
      more: 0,
    }));
    expect(records[0]).toMatchObject({ kind: 'workout', type: 'running', external_id: 'workout-42', duration_s: 2280, active_energy_kcal: 310, distance_m: 6400, avg_heart_rate: 148, max_heart_rate: 171, steps: 5800 });
    expect(records[1]).toMatchObject({ type: 'weightlifting', active_energy_kcal: 220, avg_heart_rate: null, duration_s: 2700 });
    expect(records[2]).toMatchObject({ type: 'other', metadata: expect.objectContaining({ category: 999 }) });
  });
});
