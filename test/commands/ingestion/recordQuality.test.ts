import { describe, expect, it } from 'vitest';
import { qualityFlagsOf } from '../../../commands/ingestion/recordQuality.js';
import { QUANTITY_CATALOG } from '../../../src/catalog/quantityCatalog.js';
import { category, cycle, daily, ecg, heartbeats, iso, nutrition, observation, sleepSession, workout } from '../../projections/records/fixtures.js';
import { quantity } from '../../server/records/pipelineFixtures.js';

/** Every fixture record starts on 2026-11-01; received the next day, none is in the future. */
const RECEIVED = '2026-11-02T12:00:00.000Z';
const flags = (r: Parameters<typeof qualityFlagsOf>[0], receivedAt = RECEIVED) => qualityFlagsOf(r, receivedAt);

describe('quality flags of every record kind (contracts §15)', () => {
  it('every quantity type of the catalog has one plausible range, lowest first (contracts §15: ranges live in the quantity catalog, one per type)', () => {
    for (const t of QUANTITY_CATALOG) {
      expect(t.plausible, t.type).toHaveLength(2);
      expect(t.plausible[0], t.type).toBeLessThan(t.plausible[1]);
    }
  });

  it('a plausible record of every kind has no flags: an empty array (contracts §15)', () => {
    for (const r of [quantity({ start_date: iso('2026-11-01T08:00:00Z'), value: 100 }), category(), sleepSession(), workout(), nutrition(), daily(), ecg(), heartbeats(), cycle(), observation()]) {
      expect(flags(r), r.kind).toEqual([]);
    }
  });

  it('quantity samples: implausible_value outside the catalog range of their type, both ends included (contracts §15: a heart rate over 250 count/min)', () => {
    const hr = (value: number) => quantity({ type: 'heart_rate', unit: 'count/min', start_date: iso('2026-11-01T08:00:00Z'), value });
    expect(flags(hr(250))).toEqual([]);
    expect(flags(hr(251))).toEqual(['implausible_value']);
    expect(flags(hr(20))).toEqual([]);
    expect(flags(hr(0))).toEqual(['implausible_value']);
    expect(flags(quantity({ type: 'oxygen_saturation', unit: '%', start_date: iso('2026-11-01T08:00:00Z'), value: 140 }))).toEqual(['implausible_value']);
    // A type the catalog does not know has no range to be outside of.
    expect(flags(quantity({ type: 'unknown_type', unit: 'count', start_date: iso('2026-11-01T08:00:00Z'), value: -1e9 }))).toEqual([]);
  });

  it('other kinds: a value held to the range of its catalog type wherever it appears (contracts §15)', () => {
    expect(flags(workout({ avg_heart_rate: 300 }))).toEqual(['implausible_value']);
    expect(flags(sleepSession({ spo2_avg: 130 }))).toEqual(['implausible_value']);
    expect(flags(daily({ steps: 2_000_000 }))).toEqual(['implausible_value']);
    expect(flags(ecg({ average_heart_rate: 400 }))).toEqual(['implausible_value']);
    expect(flags(nutrition({ energy_kcal: 90_000 }))).toEqual(['implausible_value']);
    expect(flags(observation({ components: [{ code: 'blood_pressure_systolic', loinc_code: '8480-6', value: 500, unit: 'mmHg' }] }))).toEqual(['implausible_value']);
  });

  it('sleep sessions over 16 hours and workouts over 24 hours: implausible_duration (contracts §15)', () => {
    const sleep = (hours: number) => sleepSession({ bedtime_start: iso('2026-11-01T00:00:00Z'), bedtime_end: new Date(Date.parse('2026-11-01T00:00:00Z') + hours * 3_600_000).toISOString() });
    expect(flags(sleep(16))).toEqual([]);
    expect(flags(sleep(16.5))).toEqual(['implausible_duration']);
    const run = (hours: number) => workout({ start_date: iso('2026-10-31T00:00:00Z'), end_date: new Date(Date.parse('2026-10-31T00:00:00Z') + hours * 3_600_000).toISOString() });
    expect(flags(run(24))).toEqual([]);
    expect(flags(run(25))).toEqual(['implausible_duration']);
  });

  it('future: ending more than 10 minutes after it was received, judged against the receipt (contracts §15)', () => {
    const received = '2026-11-01T08:00:00.000Z';
    const endingAt = (end: string) => quantity({ type: 'step_count', start_date: iso('2026-11-01T07:00:00Z'), end_date: iso(end), value: 10 });
    expect(flags(endingAt('2026-11-01T08:10:00Z'), received)).toEqual([]);
    expect(flags(endingAt('2026-11-01T08:10:01Z'), received)).toEqual(['future']);
    expect(flags(sleepSession({ bedtime_start: iso('2026-11-01T00:00:00Z'), bedtime_end: iso('2026-11-01T09:00:00Z') }), received)).toEqual(['future']);
    expect(flags(workout({ start_date: iso('2026-11-01T07:30:00Z'), end_date: iso('2026-11-01T09:00:00Z') }), received)).toEqual(['future']);
    expect(flags(category({ start_date: iso('2026-11-01T07:30:00Z'), end_date: iso('2026-11-01T09:00:00Z') }), received)).toEqual(['future']);
  });

  it('future for dated records: a day summary or a cycle whose date has not begun anywhere at the receipt; today is not future (contracts §15)', () => {
    const received = '2026-11-01T08:00:00.000Z';
    expect(flags(daily({ date: '2026-11-01' }), received)).toEqual([]);
    // 2026-11-02 begins at UTC+14 on 2026-11-01T10:00Z: two hours after the receipt.
    expect(flags(daily({ date: '2026-11-02' }), received)).toEqual(['future']);
    expect(flags(daily({ date: '2026-11-02' }), '2026-11-01T10:00:00.000Z')).toEqual([]);
    expect(flags(cycle({ start_date: '2026-11-05', period_end_date: null }), received)).toEqual(['future']);
  });

  it('a state category (a pregnancy) may end at a planned date: only its start can be in the future (contracts §15; intervalBounds states)', () => {
    const pregnancy = (start: string) => category({ type: 'pregnancy', value: 'not_applicable', start_date: iso(start), end_date: iso('2027-05-01T00:00:00Z') });
    expect(flags(pregnancy('2026-09-01T00:00:00Z'), RECEIVED)).toEqual([]);
    expect(flags(pregnancy('2026-11-03T00:00:00Z'), RECEIVED)).toEqual(['future']);
  });

  it("manual: from the source's own marker, HealthKit HKWasUserEntered, Health Connect's manual recording method, providers' flags (contracts §15)", () => {
    expect(flags(quantity({ start_date: iso('2026-11-01T08:00:00Z'), value: 70, was_user_entered: true }))).toEqual(['manual']);
    expect(flags(category({ was_user_entered: true }))).toEqual(['manual']);
    expect(flags(workout({ metadata: { HKWasUserEntered: 1 } }))).toEqual(['manual']);
    expect(flags(sleepSession({ metadata: { HKWasUserEntered: '1' } }))).toEqual(['manual']);
    expect(flags(workout({ metadata: { recordingMethod: 3 } }))).toEqual(['manual']);
    expect(flags(nutrition({ metadata: { recordingMethod: 'RECORDING_METHOD_MANUAL_ENTRY' } }))).toEqual(['manual']);
    expect(flags(workout({ metadata: { manual: true } }))).toEqual(['manual']);
    expect(flags(sleepSession({ metadata: { log_type: 'manual' } }))).toEqual(['manual']);
    expect(flags(workout({ metadata: { was_user_entered: true } }))).toEqual(['manual']);
    // Health Connect's automatic (2) and active (1) recording methods are not manual.
    expect(flags(workout({ metadata: { recordingMethod: 2 } }))).toEqual([]);
    expect(flags(workout({ metadata: { HKWasUserEntered: 0 } }))).toEqual([]);
  });

  it('flags combine in a fixed order (contracts §15)', () => {
    const r = quantity({ type: 'heart_rate', unit: 'count/min', start_date: iso('2026-11-03T08:00:00Z'), value: 400, was_user_entered: true });
    expect(flags(r)).toEqual(['implausible_value', 'future', 'manual']);
  });
});
