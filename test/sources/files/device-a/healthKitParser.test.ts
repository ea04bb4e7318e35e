import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createGzip, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type {
  CategoryRecord,
  EcgRecord,
  MenstrualCycleRecord,
  NormalizedRecord,
  ParseItem,
  QuantityRecord,
  RejectedItem,
  SleepSessionRecord,
} from '../../../../commands/ingestion/records.js';
import { findQuantityType } from '../../../../src/catalog/quantityCatalog.js';
import { storageUnitConverter, toStorageUnit } from '../../../../src/catalog/units.js';
import { parseHealthKitDate } from '../../../../src/sources/files/device-a/healthKitDates.js';
import { UnreadableExportError } from '../../../../src/sources/files/exportShared/unreadableExport.js';
import { healthKitParser } from '../../../../src/sources/files/device-a/healthKitParser.js';
import { excerptOf } from '../../../../src/sources/files/device-a/lineFields.js';

/**
 * device-a (contracts.md §3): gzip of NDJSON in HealthKit's names; values converted to the storage
 * unit of their quantity type (§4) with metadata.original_value/original_unit; sleep-analysis
 * samples of one night become one sleep session. Fixture: test/fixtures/device-a/README.md.
 */
const FIXTURE = readFileSync(fileURLToPath(new URL('../../../fixtures/device-a/healthkit-export.ndjson', import.meta.url)), 'utf8');

/** `unreadable`: the verdict on a file of which not one line is a JSON object (the upload ends failed with it, contracts §17). */
type Parsed = { items: ParseItem[]; records: NormalizedRecord[]; rejected: RejectedItem[]; unreadable: string | null };

async function parseGz(gz: Buffer): Promise<Parsed> {
  const items: ParseItem[] = [];
  let unreadable: string | null = null;
  try {
    for await (const item of healthKitParser.parse(gz, { provider: 'device-a', receivedAt: '2026-11-22T00:00:00.000Z', dataType: null })) items.push(item);
  } catch (err) {
    if (!(err instanceof UnreadableExportError)) throw err;
    unreadable = err.message;
  }
  return {
    items,
    unreadable,
    records: items.flatMap((i) => ('record' in i ? [i.record] : [])),
    rejected: items.flatMap((i) => ('rejected' in i ? [i.rejected] : [])),
  };
}
const parse = (ndjson: string) => parseGz(gzipSync(ndjson));
const line = (o: object) => JSON.stringify(o);

const id = (n: number) => `E1A7D3C2-0B4F-4F6E-9A01-${String(n).padStart(12, '0')}`;
const WATCH = {
  source_name: 'Anna’s Apple Watch',
  source_bundle_id: 'com.apple.health.6F1D2A7B-1C3E-4B8A-9E55-0D2C9A4E7F10',
  device_model: 'Watch',
  product_type: 'Watch7,1',
};
const PHONE = {
  source_name: 'Anna’s iPhone',
  source_bundle_id: 'com.apple.health.A93B5C21-77E0-4D1F-8B3A-52C6E1F0D4B8',
  device_model: 'iPhone',
  product_type: 'iPhone15,2',
};
const WITHINGS = { source_name: 'Withings', source_bundle_id: 'com.withings.wiScaleNG', device_model: 'Body+', product_type: null };
const OURA = { source_name: 'Oura', source_bundle_id: 'com.ouraring.oura', device_model: null, product_type: null };
const WATCH_PROV = { provider: 'device-a', source: 'apple', device: 'Watch (Watch7,1)', body_worn: true };
const PHONE_PROV = { provider: 'device-a', source: 'apple', device: 'iPhone (iPhone15,2)', body_worn: false };
const WITHINGS_PROV = { provider: 'device-a', source: 'withings', device: 'Body+', body_worn: false };
const OURA_PROV = { provider: 'device-a', source: 'oura', device: null, body_worn: true };
const OMRON_PROV = { provider: 'device-a', source: 'omron', device: 'HEM-7600T', body_worn: false };
const MFP_PROV = { provider: 'device-a', source: 'myfitnesspal', device: null, body_worn: false };

const byKind = <K extends NormalizedRecord['kind']>(records: NormalizedRecord[], kind: K) =>
  records.filter((r): r is Extract<NormalizedRecord, { kind: K }> => r.kind === kind);

describe('healthKitParser: the fixture upload (contracts §3)', async () => {
  const { items, records, rejected } = await parse(FIXTURE);
  const quantities = byKind(records, 'quantity');
  const find = (n: number) => records.find((r) => r.external_id === id(n));

  it('has slug device-a and yields every line in upload order, grouped records (sleep, cycles) at the end (contracts §3)', () => {
    expect(healthKitParser.slug).toBe('device-a');
    const kinds = items.map((i) => ('record' in i ? i.record.kind : 'rejected'));
    expect(kinds).toEqual([
      ...Array(5).fill('quantity'),
      'rejected', // line 6: not JSON
      ...Array(14).fill('quantity'),
      'rejected', // line 21: unknown quantity type
      ...Array(5).fill('quantity'),
      ...Array(7).fill('category'),
      'rejected', // line 34: end before start
      ...Array(5).fill('category'),
      'category', // mindful session
      'category', // stand hour
      'workout',
      'ecg',
      'heartbeat_series',
      'observation',
      'quantity',
      'quantity', // blood pressure: observation + systolic + diastolic
      'nutrition',
      ...Array(8).fill('category'), // menstrual flow
      'rejected', // line 55: unit does not convert
      'sleep_session',
      'sleep_session',
      'menstrual_cycle',
      'menstrual_cycle',
    ]);
  });

  it('counts the bad lines as rejected, each with its line, a clear reason and the line as excerpt (contracts §3: rejected records kept for inspection)', () => {
    const lines = FIXTURE.split('\n');
    expect(rejected.map(({ location, reason }) => ({ location, reason }))).toEqual([
      { location: 'line 6', reason: 'line is not valid JSON' },
      { location: 'line 21', reason: 'unknown quantity type HKQuantityTypeIdentifierNotARealType' },
      { location: 'line 34', reason: 'end_date is before start_date' },
      { location: 'line 55', reason: 'cannot convert unit "kg" to count/min (heart_rate)' },
    ]);
    for (const r of rejected) expect(r.excerpt).toBe(lines[Number(r.location.slice(5)) - 1]);
  });

  it('stores a heart rate sample of the Watch as a complete quantity record: catalog type, storage unit, UTC times, provenance, metadata as sent plus timezone and original value/unit (contracts §3, §4)', () => {
    expect(find(1)).toEqual({
      kind: 'quantity',
      external_id: id(1),
      type: 'heart_rate',
      value: 72,
      unit: 'count/min',
      start_date: '2026-11-01T08:00:00.000Z',
      end_date: '2026-11-01T08:00:00.000Z',
      ...WATCH,
      was_user_entered: false,
      metadata: { HKTimeZone: 'Europe/Berlin', HKHeartRateMotionContext: 1, timezone: 'Europe/Berlin', original_value: 72, original_unit: 'count/min' },
      ...WATCH_PROV,
    });
  });

  it('maps every quantity line to its catalog type with the value in the storage unit and the sent value kept (contracts §3, §4)', () => {
    const rows = quantities
      .filter((q) => q.metadata.correlation_id === undefined)
      .map((q) => [q.external_id.slice(-2), q.type, q.value, q.unit, q.start_date, q.end_date, q.metadata.original_value, q.metadata.original_unit, q.source, q.device, q.body_worn]);
    const W = ['apple', 'Watch (Watch7,1)', true];
    const P = ['apple', 'iPhone (iPhone15,2)', false];
    const S = ['withings', 'Body+', false];
    const t = (s: string) => `2026-11-${s}.000Z`;
    expect(rows).toEqual([
      ['01', 'heart_rate', 72, 'count/min', t('01T08:00:00'), t('01T08:00:00'), 72, 'count/min', ...W],
      ['02', 'heart_rate', 75, 'count/min', t('01T08:05:00'), t('01T08:05:00'), 75, 'count/min', ...W],
      ['03', 'heart_rate', 78, 'count/min', t('01T08:10:00'), t('01T08:10:00'), 1.3, 'count/s', ...W],
      ['04', 'heart_rate', 88, 'count/min', t('01T12:30:00'), t('01T12:30:00'), 88, 'count/min', ...W],
      ['05', 'heart_rate', 64, 'count/min', t('01T18:00:00'), t('01T18:00:00'), 64, 'count/min', ...W],
      ['06', 'resting_heart_rate', 58, 'count/min', t('01T00:00:00'), t('01T23:59:59'), 58, 'count/min', ...W],
      ['07', 'hrv_sdnn', 45.3, 'ms', t('01T06:10:00'), t('01T06:11:00'), 45.3, 'ms', ...W],
      ['08', 'step_count', 512, 'count', t('01T08:00:00'), t('01T08:10:00'), 512, 'count', ...P],
      ['09', 'step_count', 1320, 'count', t('01T09:00:00'), t('01T09:15:00'), 1320, 'count', ...P],
      ['10', 'step_count', 498, 'count', t('01T08:00:00'), t('01T08:10:00'), 498, 'count', ...W],
      ['11', 'step_count', 3105, 'count', t('01T17:00:00'), t('01T17:30:00'), 3105, 'count', ...W],
      ['12', 'active_energy_burned', 100, 'kcal', t('01T08:00:00'), t('01T08:10:00'), 418.4, 'kJ', ...W],
      ['13', 'active_energy_burned', 35.5, 'kcal', t('01T17:00:00'), t('01T17:30:00'), 35.5, 'kcal', ...W],
      ['14', 'basal_energy_burned', 1680, 'kcal', t('01T00:00:00'), t('01T23:59:59'), 1680, 'kcal', ...W],
      ['15', 'walking_running_distance', 620, 'm', t('01T09:00:00'), t('01T09:15:00'), 0.62, 'km', ...P],
      ['16', 'flights_climbed', 3, 'count', t('01T09:00:00'), t('01T09:15:00'), 3, 'count', ...P],
      ['17', 'body_mass', 69.989302691, 'kg', t('01T06:45:12'), t('01T06:45:12'), 154.3, 'lb', ...S],
      ['18', 'body_fat_percentage', 21.5, '%', t('01T06:45:12'), t('01T06:45:12'), 0.215, '%', ...S],
      ['19', 'body_temperature', 37, 'degC', t('01T07:30:00'), t('01T07:30:00'), 98.6, 'degF', ...P],
      ['20', 'height', 1.78, 'm', '2026-10-01T10:00:00.000Z', '2026-10-01T10:00:00.000Z', 178, 'cm', ...P],
      ['21', 'oxygen_saturation', 97, '%', t('02T03:12:00'), t('02T03:12:00'), 0.97, '%', ...W],
      ['22', 'respiratory_rate', 14.5, 'count/min', t('02T03:12:00'), t('02T03:12:00'), 14.5, 'count/min', ...W],
      ['23', 'vo2_max', 44.2, 'mL/(kg*min)', t('01T07:32:10'), t('01T07:32:10'), 44.2, 'mL/(kg*min)', ...W],
      ['24', 'blood_glucose', 94, 'mg/dL', t('01T07:00:00'), t('01T07:00:00'), 94, 'mg/dL', ...P],
    ]);
  });

  it('converts units through UCUM: lb→kg, degF→degC, kJ→kcal, count/s→count/min, km→m, cm→m (contracts §3: values arrive in any HealthKit unit)', () => {
    expect(find(17)).toMatchObject({ type: 'body_mass', value: 69.989302691, unit: 'kg', metadata: { original_value: 154.3, original_unit: 'lb' } });
    expect(find(19)).toMatchObject({ type: 'body_temperature', value: 37, unit: 'degC', metadata: { original_value: 98.6, original_unit: 'degF' } });
    expect(find(12)).toMatchObject({ type: 'active_energy_burned', value: 100, unit: 'kcal', metadata: { original_value: 418.4, original_unit: 'kJ' } });
    expect(find(3)).toMatchObject({ value: 78, unit: 'count/min' });
    expect(find(15)).toMatchObject({ value: 620, unit: 'm' });
    expect(find(20)).toMatchObject({ value: 1.78, unit: 'm' });
  });

  it('stores HealthKit percent fractions as UCUM percent, keeping the fraction as the original value (contracts §4: storage unit %)', () => {
    expect(find(21)).toMatchObject({ type: 'oxygen_saturation', value: 97, unit: '%', metadata: { original_value: 0.97, original_unit: '%' } });
    expect(find(18)).toMatchObject({ type: 'body_fat_percentage', value: 21.5, unit: '%', metadata: { original_value: 0.215, original_unit: '%' } });
  });

  it('normalises times to UTC toISOString whether sent with Z, an offset, or in Apple’s export form (records.ts: RFC 3339 UTC with milliseconds)', () => {
    expect(find(4)).toMatchObject({ start_date: '2026-11-01T12:30:00.000Z' }); // 13:30:00+01:00
    expect(find(5)).toMatchObject({ start_date: '2026-11-01T18:00:00.000Z' }); // 2026-11-01 19:00:00 +0100
  });

  it('derives provenance: source from the bundle id, device from model and product type, body_worn from the device kind (spec "Merged view": ranking)', () => {
    expect(find(1)).toMatchObject(WATCH_PROV); // Apple Watch
    expect(find(8)).toMatchObject({ ...PHONE_PROV, ...PHONE }); // iPhone
    expect(find(17)).toMatchObject({ ...WITHINGS_PROV, ...WITHINGS }); // scale app
    expect(find(25)).toMatchObject({ ...OURA_PROV, ...OURA }); // ring, no device fields
  });

  it('keeps the provider metadata as sent, adds timezone from HKTimeZone, null when absent, and reads was_user_entered (spec "Quantity sample": metadata)', () => {
    expect(find(17)!.metadata).toEqual({
      HKTimeZone: 'Europe/Berlin',
      HKWasUserEntered: false,
      'Withings measure group': 4412983,
      timezone: 'Europe/Berlin',
      original_value: 154.3,
      original_unit: 'lb',
    });
    expect(find(20)).toMatchObject({ was_user_entered: true, metadata: { timezone: null, original_value: 178, original_unit: 'cm' } });
    expect(find(19)).toMatchObject({ was_user_entered: true });
  });

  it('gives category samples their canonical type and value, keeping HealthKit’s value in metadata (records.ts CategoryRecord)', () => {
    const cats = byKind(records, 'category').map((c) => [c.type, c.value, c.metadata.original_value]);
    expect(cats).toContainEqual(['sleep_analysis', 'in_bed', 'HKCategoryValueSleepAnalysisInBed']);
    expect(cats).toContainEqual(['sleep_analysis', 'asleep_core', 'HKCategoryValueSleepAnalysisAsleepCore']);
    expect(cats).toContainEqual(['sleep_analysis', 'asleep_deep', 'HKCategoryValueSleepAnalysisAsleepDeep']);
    expect(cats).toContainEqual(['sleep_analysis', 'asleep_rem', 'HKCategoryValueSleepAnalysisAsleepREM']);
    expect(cats).toContainEqual(['sleep_analysis', 'awake', 'HKCategoryValueSleepAnalysisAwake']);
    expect(cats).toContainEqual(['sleep_analysis', 'asleep_unspecified', 'HKCategoryValueSleepAnalysisAsleepUnspecified']);
    expect(cats).toContainEqual(['mindful_session', 'not_applicable', 'HKCategoryValueNotApplicable']);
    expect(cats).toContainEqual(['stand_hour', 'stood', 'HKCategoryValueAppleStandHourStood']);
    expect(cats.filter((c) => c[0] === 'menstrual_flow').map((c) => c[1])).toEqual(['heavy', 'medium', 'light', 'light', 'medium', 'heavy', 'light', 'none']);
    expect(find(25)).toEqual({
      kind: 'category',
      external_id: id(25),
      type: 'sleep_analysis',
      value: 'in_bed',
      start_date: '2026-11-01T22:30:00.000Z',
      end_date: '2026-11-02T06:35:00.000Z',
      ...OURA,
      was_user_entered: false,
      metadata: { HKTimeZone: 'Europe/Berlin', timezone: 'Europe/Berlin', original_value: 'HKCategoryValueSleepAnalysisInBed' },
      ...OURA_PROV,
    } satisfies CategoryRecord);
  });

  it('groups the Oura night into ONE sleep session with phases and second totals; the nap over 2 h later is a second session (contracts §3)', () => {
    const sessions = byKind(records, 'sleep_session');
    expect(sessions).toHaveLength(2);
    const night = sessions[0]!;
    const at = (s: string) => `2026-11-0${s}.000Z`;
    expect(night).toEqual({
      kind: 'sleep_session',
      external_id: expect.stringMatching(/^sleep:[0-9a-f]{32}$/),
      bedtime_start: at('1T22:30:00'),
      bedtime_end: at('2T06:35:00'),
      total_sleep_seconds: 26_400, // deep 100 + rem 80 + core 260 min
      deep_sleep_seconds: 6_000,
      rem_sleep_seconds: 4_800,
      light_sleep_seconds: 15_600,
      awake_seconds: 1_500,
      sleep_score: null,
      hrv_avg_ms: null,
      resting_hr: null,
      respiratory_rate: null,
      spo2_avg: null,
      phases: [
        { phase: 'in_bed', start_date: at('1T22:30:00'), end_date: at('2T06:35:00') },
        { phase: 'light', start_date: at('1T22:45:00'), end_date: at('1T23:30:00') },
        { phase: 'deep', start_date: at('1T23:30:00'), end_date: at('2T00:30:00') },
        { phase: 'light', start_date: at('2T00:30:00'), end_date: at('2T01:45:00') },
        { phase: 'rem', start_date: at('2T01:45:00'), end_date: at('2T02:15:00') },
        { phase: 'awake', start_date: at('2T02:15:00'), end_date: at('2T02:25:00') },
        { phase: 'light', start_date: at('2T02:25:00'), end_date: at('2T03:40:00') },
        { phase: 'deep', start_date: at('2T03:40:00'), end_date: at('2T04:20:00') },
        { phase: 'rem', start_date: at('2T04:20:00'), end_date: at('2T05:10:00') },
        { phase: 'light', start_date: at('2T05:10:00'), end_date: at('2T06:15:00') },
        { phase: 'awake', start_date: at('2T06:15:00'), end_date: at('2T06:30:00') },
      ],
      metadata: {
        timezone: 'Europe/Berlin',
        in_bed_seconds: 29_100,
        asleep_unspecified_seconds: 0,
        sample_count: 11,
        source_name: 'Oura',
        source_bundle_id: 'com.ouraring.oura',
      },
      ...OURA_PROV,
    } satisfies SleepSessionRecord);
    expect(sessions[1]).toMatchObject({
      bedtime_start: at('2T13:00:00'),
      bedtime_end: at('2T13:40:00'),
      total_sleep_seconds: 2_400, // asleep (unspecified) counts as sleep
      deep_sleep_seconds: 0,
      phases: [{ phase: 'asleep', start_date: at('2T13:00:00'), end_date: at('2T13:40:00') }],
    });
  });

  it('derives menstrual cycles at the end: start after ≥ 2 days without flow, period end, cycle length, flow by local day (contracts §3; records.ts MenstrualCycleRecord)', () => {
    const cycles = byKind(records, 'menstrual_cycle');
    const HEALTH_PROV = { provider: 'device-a', source: 'apple', device: 'iPhone (iPhone15,2)', body_worn: false };
    expect(cycles).toEqual([
      {
        kind: 'menstrual_cycle',
        external_id: expect.stringMatching(/^cycle:[0-9a-f]{32}$/),
        start_date: '2026-10-05', // 2026-10-04T22:00Z is the 5th in Europe/Berlin
        period_end_date: '2026-10-09', // one day without flow does not end the period
        period_length_days: 5,
        cycle_length_days: 28,
        flow: { '2026-10-05': 'heavy', '2026-10-06': 'medium', '2026-10-07': 'light', '2026-10-09': 'light' },
        metadata: { timezone: 'Europe/Berlin', source_name: 'Health', source_bundle_id: 'com.apple.Health' },
        ...HEALTH_PROV,
      },
      {
        kind: 'menstrual_cycle',
        external_id: expect.stringMatching(/^cycle:[0-9a-f]{32}$/),
        start_date: '2026-11-02',
        period_end_date: '2026-11-04', // flow "none" on the 5th is not a flow day
        period_length_days: 3,
        cycle_length_days: null,
        flow: { '2026-11-02': 'medium', '2026-11-03': 'heavy', '2026-11-04': 'light' },
        metadata: { timezone: 'Europe/Berlin', source_name: 'Health', source_bundle_id: 'com.apple.Health' },
        ...HEALTH_PROV,
      },
    ] satisfies MenstrualCycleRecord[]);
    expect(cycles[0]!.external_id).not.toBe(cycles[1]!.external_id);
  });

  it('turns an HKWorkout line into a workout: activity, duration, energy in kcal, distance in m, statistics, route points (contracts §3)', () => {
    const at = (s: string) => `2026-11-01T07:${s}.000Z`;
    expect(byKind(records, 'workout')).toEqual([
      {
        kind: 'workout',
        external_id: id(39),
        type: 'running',
        start_date: at('00:00'),
        end_date: at('32:10'),
        duration_s: 1930,
        active_energy_kcal: 312.4,
        distance_m: 5020,
        avg_heart_rate: 152,
        max_heart_rate: 171,
        steps: 5480,
        route: [
          { timestamp: at('00:00'), latitude: 52.520008, longitude: 13.404954, altitude_m: 34.2, speed_mps: 0, course_deg: null, horizontal_accuracy_m: 4.7 },
          { timestamp: at('00:05'), latitude: 52.520091, longitude: 13.405122, altitude_m: 34.4, speed_mps: 2.9, course_deg: 51.3, horizontal_accuracy_m: 4.2 },
          { timestamp: at('00:10'), latitude: 52.520177, longitude: 13.405301, altitude_m: 34.9, speed_mps: 3.1, course_deg: 52, horizontal_accuracy_m: 3.9 },
          // the point without latitude is dropped; negative speed / vertical accuracy mean "unknown" (CLLocation)
          { timestamp: at('00:20'), latitude: 52.520349, longitude: 13.405662, altitude_m: null, speed_mps: null, course_deg: 53.4, horizontal_accuracy_m: 5.1 },
          { timestamp: at('32:10'), latitude: 52.521944, longitude: 13.413215, altitude_m: 36, speed_mps: 2.4, course_deg: 90, horizontal_accuracy_m: 3.5 },
        ],
        metadata: {
          HKTimeZone: 'Europe/Berlin',
          HKIndoorWorkout: false,
          HKElevationAscended: { value: 42, unit: 'm' },
          timezone: 'Europe/Berlin',
          original_activity_type: 'HKWorkoutActivityTypeRunning',
          route_points_dropped: 1,
        },
        ...WATCH_PROV,
      },
    ]);
  });

  it('turns an HKElectrocardiogram line into an ECG record: classification passed through, number_of_measurements = voltages.length (spec "ECG recording")', () => {
    const [ecg] = byKind(records, 'ecg');
    const sent = JSON.parse(FIXTURE.split('\n').find((l) => l.includes('"kind":"ecg"'))!) as { voltages: number[] };
    expect(ecg).toEqual({
      kind: 'ecg',
      external_id: id(40),
      start_date: '2026-11-01T10:00:00.000Z',
      end_date: '2026-11-01T10:00:30.000Z',
      classification: 'sinusRhythm',
      classification_value: 1,
      symptoms_status: 'none',
      average_heart_rate: 68,
      sampling_frequency_hz: 512,
      number_of_measurements: 300,
      voltages: sent.voltages,
      metadata: { HKTimeZone: 'Europe/Berlin', HKAlgorithmVersion: 2, timezone: 'Europe/Berlin' },
      ...WATCH_PROV,
    } satisfies EcgRecord);
  });

  it('turns an HKHeartbeatSeriesSample line into beats with offsets and gaps (records.ts HeartbeatSeriesRecord)', () => {
    const [hb] = byKind(records, 'heartbeat_series');
    expect(hb!.beats).toHaveLength(10);
    expect(hb!.beats.slice(4, 7)).toEqual([
      { offset_s: 3.44, preceded_by_gap: false },
      { offset_s: 5.97, preceded_by_gap: true },
      { offset_s: 6.83, preceded_by_gap: false },
    ]);
    expect(hb).toMatchObject({ external_id: id(41), start_date: '2026-11-02T03:00:00.000Z', end_date: '2026-11-02T03:00:10.000Z', ...WATCH_PROV });
  });

  it('turns a blood pressure correlation into an observation (LOINC 85354-9, components 8480-6 / 8462-4 in mmHg) and the two quantity samples (contracts §3)', () => {
    const [obs] = byKind(records, 'observation');
    expect(obs).toEqual({
      kind: 'observation',
      external_id: id(42),
      code: 'blood_pressure',
      loinc_code: '85354-9',
      start_date: '2026-11-01T19:00:00.000Z',
      end_date: '2026-11-01T19:00:00.000Z',
      components: [
        { code: 'systolic', loinc_code: '8480-6', value: 122, unit: 'mmHg' },
        { code: 'diastolic', loinc_code: '8462-4', value: 79, unit: 'mmHg' },
      ],
      metadata: { HKTimeZone: 'Europe/Berlin', timezone: 'Europe/Berlin' },
      ...OMRON_PROV,
    });
    const bp = quantities.filter((q) => q.metadata.correlation_id === id(42));
    expect(bp.map((q) => [q.external_id, q.type, q.value, q.unit, q.start_date])).toEqual([
      [id(43), 'blood_pressure_systolic', 122, 'mmHg', '2026-11-01T19:00:00.000Z'],
      [id(44), 'blood_pressure_diastolic', 79, 'mmHg', '2026-11-01T19:00:00.000Z'],
    ]);
    expect(bp[0]).toMatchObject({ ...OMRON_PROV, metadata: { timezone: 'Europe/Berlin', original_value: 122, original_unit: 'mmHg' } });
  });

  it('turns a food correlation into a nutrition record with energy in kcal and nutrients in g/mg (contracts §3)', () => {
    expect(byKind(records, 'nutrition')).toEqual([
      {
        kind: 'nutrition',
        external_id: id(45),
        start_date: '2026-11-01T07:45:00.000Z',
        end_date: '2026-11-01T07:45:00.000Z',
        name: 'Oatmeal with banana',
        meal_type: null,
        energy_kcal: 350, // 1464.4 kJ
        protein_g: 12.5,
        carbohydrates_g: 58,
        fat_g: 7.2,
        fiber_g: 8,
        sugar_g: 14,
        sodium_mg: 120, // 0.12 g
        water_ml: null,
        nutrients: { potassium: { value: 450, unit: 'mg' }, vitamin_c: { value: 11, unit: 'mg' } }, // 0.011 g, in the catalog's unit (dietary vitamin C is a catalog type)
        metadata: { HKTimeZone: 'Europe/Berlin', HKFoodType: 'Oatmeal with banana', timezone: 'Europe/Berlin' },
        ...MFP_PROV,
      },
    ]);
  });
});

describe('healthKitParser: rejected lines (contracts §3)', () => {
  const base = {
    kind: 'quantity',
    uuid: 'A1B2C3D4-0000-4000-8000-000000000001',
    type: 'HKQuantityTypeIdentifierHeartRate',
    value: 70,
    unit: 'count/min',
    start_date: '2026-11-01T09:00:00Z',
    end_date: '2026-11-01T09:00:00Z',
    ...WATCH,
  };
  const reasonOf = async (text: string) => {
    const { rejected, records } = await parse(text);
    expect(records).toEqual([]);
    expect(rejected).toHaveLength(1);
    return rejected[0]!.reason;
  };

  it.each([
    ['a line that is not an object', '[1,2,3]', 'line is not a JSON object'],
    ['a line without kind', line({ ...base, kind: undefined }), 'missing kind'],
    ['an unknown kind', line({ ...base, kind: 'medication' }), 'unknown kind "medication"'],
    ['a line without uuid', line({ ...base, uuid: undefined }), 'missing uuid'],
    ['a value that is not a number', line({ ...base, value: '70' }), 'value is not a finite number'],
    ['a missing unit', line({ ...base, unit: undefined }), 'missing unit'],
    ['a missing start_date', line({ ...base, start_date: undefined }), 'missing start_date'],
    ['a day the month lacks', line({ ...base, start_date: '2026-02-30T09:00:00Z' }), 'start_date is not a date-time with a time zone'],
    ['a time without zone', line({ ...base, end_date: '2026-11-01T09:00:00' }), 'end_date is not a date-time with a time zone'],
    ['an unknown sleep value', line({ ...base, kind: 'category', type: 'HKCategoryTypeIdentifierSleepAnalysis', value: 'HKCategoryValueSleepAnalysisDreaming' }), 'unknown value "HKCategoryValueSleepAnalysisDreaming" for HKCategoryTypeIdentifierSleepAnalysis'],
    ['an unknown category type', line({ ...base, kind: 'category', type: 'SleepAnalysis', value: 1 }), 'unknown category type SleepAnalysis'],
    ['an ECG with a non-numeric voltage', line({ ...base, kind: 'ecg', voltages: [1, 'x'] }), 'voltages[1] is not a finite number'],
    ['a blood pressure without diastolic', line({ ...base, kind: 'correlation', type: 'HKCorrelationTypeIdentifierBloodPressure', objects: [{ type: 'HKQuantityTypeIdentifierBloodPressureSystolic', value: 120, unit: 'mmHg' }] }), 'blood pressure correlation needs exactly one systolic and one diastolic object'],
    ['an unknown correlation type', line({ ...base, kind: 'correlation', type: 'HKCorrelationTypeIdentifierSnack', objects: [] }), 'unknown correlation type HKCorrelationTypeIdentifierSnack'],
    ['a heartbeat with a negative offset', line({ ...base, kind: 'heartbeat_series', beats: [{ time_since_series_start: -1 }] }), 'beats[0].time_since_series_start is not a number ≥ 0'],
  ])('rejects %s with a clear reason', async (_what, text, reason) => {
    expect(await reasonOf(text)).toBe(reason);
  });

  it('keeps at most 1 KiB of the offending line as excerpt, cut on a character boundary (records.ts RejectedItem)', async () => {
    const long = `{"kind":"quantity","note":"${'é'.repeat(5000)}"`;
    const { rejected } = await parse(long);
    expect(rejected[0]!.location).toBe('line 1');
    expect(Buffer.byteLength(rejected[0]!.excerpt)).toBeLessThanOrEqual(1024);
    expect(long.startsWith(rejected[0]!.excerpt)).toBe(true);
    expect(excerptOf('😀'.repeat(400))).toBe('😀'.repeat(256));
  });

  it('rejects a line longer than 32 Mi characters without assembling it, and goes on with the next line', async () => {
    const huge = `{"kind":"quantity","note":"${'a'.repeat(33 * 1024 * 1024)}"}`;
    const { records, rejected } = await parse(`${huge}\n${line(base)}\n`);
    expect(rejected).toEqual([{ location: 'line 1', reason: 'line is longer than 33554432 characters', excerpt: huge.slice(0, 1024) }]);
    expect(records.map((r) => r.external_id)).toEqual([base.uuid]);
  });

  it('skips blank lines, accepts CRLF line endings and a last line without newline, counting lines from 1', async () => {
    const text = `${line(base)}\r\n\r\n{bad}\r\n${line({ ...base, uuid: 'A1B2C3D4-0000-4000-8000-000000000002' })}`;
    const { records, rejected } = await parse(text);
    expect(records.map((r) => r.external_id)).toEqual(['A1B2C3D4-0000-4000-8000-000000000001', 'A1B2C3D4-0000-4000-8000-000000000002']);
    expect(rejected).toEqual([{ location: 'line 3', reason: 'line is not valid JSON', excerpt: '{bad}' }]);
  });

  it('rejects a payload that is not gzip as one item, and keeps the lines before a truncated gzip end (contracts §3: everything else is stored)', async () => {
    const notGzip = await parseGz(Buffer.from(line(base)));
    expect(notGzip.records).toEqual([]);
    expect(notGzip.rejected).toHaveLength(1);
    expect(notGzip.rejected[0]!.reason).toMatch(/^payload is not a complete gzip stream/);
    expect(notGzip.unreadable).toBe('not a HealthKit NDJSON upload: not one of its 1 lines is a JSON object');

    const many = Array.from({ length: 2000 }, (_, i) => line({ ...base, uuid: `A1B2C3D4-0000-4000-8000-${String(i).padStart(12, '0')}` })).join('\n');
    const gz = gzipSync(many);
    const cut = await parseGz(gz.subarray(0, gz.length - 40));
    expect(cut.records.length).toBeGreaterThan(1500);
    expect(cut.records.length).toBeLessThan(2000);
    expect(cut.rejected).toHaveLength(1);
    expect(cut.rejected[0]).toMatchObject({ location: `line ${cut.records.length + 1}` });
    expect(cut.unreadable).toBeNull();

    // A small payload (inflated in one call, not streamed) cut in its trailer keeps its lines too.
    const few = Array.from({ length: 5 }, (_, i) => line({ ...base, uuid: `A1B2C3D4-0000-4000-8000-${String(i).padStart(12, '0')}` })).join('\n');
    const smallGz = gzipSync(few);
    expect(smallGz.length).toBeLessThan(2048);
    const smallCut = await parseGz(smallGz.subarray(0, smallGz.length - 4));
    // The last line, cut off with the stream's end, is the rejected one, as in a streamed payload.
    expect(smallCut.records).toHaveLength(4);
    expect(smallCut.rejected).toHaveLength(1);
    expect(smallCut.rejected[0]).toMatchObject({ location: 'line 5' });
    expect(smallCut.rejected[0]!.reason).toMatch(/^payload is not a complete gzip stream/);
  });

  it('contracts §17: a file of which not one line is a JSON object is unreadable (its lines stay rejected); one object line among bad ones is not', async () => {
    const prose = await parse('hello world\nthis is not json\n[1,2]\n');
    expect(prose.rejected.map((r) => r.reason)).toEqual(['line is not valid JSON', 'line is not valid JSON', 'line is not a JSON object']);
    expect(prose.unreadable).toBe('not a HealthKit NDJSON upload: not one of its 3 lines is a JSON object');
    const oneObject = await parse(`hello world\n${line({ ...base, kind: undefined })}\n`);
    expect(oneObject.rejected.map((r) => r.reason)).toEqual(['line is not valid JSON', 'missing kind']);
    expect(oneObject.unreadable).toBeNull();
    expect((await parse('')).unreadable).toBeNull();
  });
});

describe('healthKitParser: rules in detail', () => {
  const sleep = (uuid: string, value: string, start: string, end: string, src: object = OURA) =>
    line({ kind: 'category', uuid, type: 'HKCategoryTypeIdentifierSleepAnalysis', value, start_date: start, end_date: end, ...src });

  it('gives a sleep session an external_id derived from its member uuids only, whatever their order in the upload; a sample sent twice counts once (contracts §3)', async () => {
    const a = sleep('U-1', 'HKCategoryValueSleepAnalysisAsleepCore', '2026-11-01T23:00:00Z', '2026-11-02T01:00:00Z');
    const b = sleep('U-2', 'HKCategoryValueSleepAnalysisAsleepDeep', '2026-11-02T01:00:00Z', '2026-11-02T02:00:00Z');
    const one = byKind((await parse(`${a}\n${b}\n`)).records, 'sleep_session');
    const two = byKind((await parse(`${b}\n${a}\n${a}\n`)).records, 'sleep_session');
    expect(one).toHaveLength(1);
    expect(one[0]!.external_id).toBe(two[0]!.external_id);
    expect(one[0]).toMatchObject({ total_sleep_seconds: 10_800, deep_sleep_seconds: 3_600, light_sleep_seconds: 7_200 });
    expect(two[0]).toMatchObject({ total_sleep_seconds: 10_800, metadata: { sample_count: 2 } });
  });

  it('keeps nights of different sources apart and splits one source at a gap of 2 h or more (contracts §3)', async () => {
    const text = [
      sleep('O-1', 'HKCategoryValueSleepAnalysisAsleepCore', '2026-11-01T23:00:00Z', '2026-11-02T01:00:00Z'),
      sleep('W-1', 'HKCategoryValueSleepAnalysisAsleepCore', '2026-11-01T23:05:00Z', '2026-11-02T01:00:00Z', WATCH),
      sleep('O-2', 'HKCategoryValueSleepAnalysisAwake', '2026-11-02T02:59:59Z', '2026-11-02T03:10:00Z'), // 1:59:59 after O-1: same night
      sleep('O-3', 'HKCategoryValueSleepAnalysisAsleepREM', '2026-11-02T05:10:00Z', '2026-11-02T05:40:00Z'), // exactly 2 h after O-2: new session
    ].join('\n');
    const sessions = byKind((await parse(text)).records, 'sleep_session');
    expect(sessions.map((s) => [s.source, s.bedtime_start, s.bedtime_end, s.total_sleep_seconds, s.awake_seconds])).toEqual([
      ['oura', '2026-11-01T23:00:00.000Z', '2026-11-02T03:10:00.000Z', 7_200, 601],
      ['apple', '2026-11-01T23:05:00.000Z', '2026-11-02T01:00:00.000Z', 6_900, 0],
      ['oura', '2026-11-02T05:10:00.000Z', '2026-11-02T05:40:00.000Z', 1_800, 0],
    ]);
  });

  it('accepts HealthKit’s raw integer category values for sleep analysis and menstrual flow', async () => {
    const text = [
      line({ kind: 'category', uuid: 'C-1', type: 'HKCategoryTypeIdentifierSleepAnalysis', value: 4, start_date: '2026-11-01T23:00:00Z', end_date: '2026-11-02T00:00:00Z' }),
      line({ kind: 'category', uuid: 'C-2', type: 'HKCategoryTypeIdentifierMenstrualFlow', value: 3, start_date: '2026-11-01T08:00:00Z', end_date: '2026-11-01T08:00:00Z' }),
    ].join('\n');
    const cats = byKind((await parse(text)).records, 'category');
    expect(cats.map((c) => [c.type, c.value])).toEqual([
      ['sleep_analysis', 'asleep_deep'],
      ['menstrual_flow', 'medium'],
    ]);
  });

  it('parses HealthKit dates: Z, offsets with and without colon, Apple’s export form; rejects missing zones and impossible days', () => {
    const utc = Date.UTC(2026, 10, 1, 8, 0, 0);
    expect(parseHealthKitDate('2026-11-01T08:00:00Z')).toBe(utc);
    expect(parseHealthKitDate('2026-11-01T08:00:00.250Z')).toBe(utc + 250);
    expect(parseHealthKitDate('2026-11-01T09:00:00+01:00')).toBe(utc);
    expect(parseHealthKitDate('2026-11-01 09:00:00 +0100')).toBe(utc);
    expect(parseHealthKitDate('2026-11-01T03:30:00-04:30')).toBe(utc);
    expect(parseHealthKitDate('2024-02-29T08:00:00Z')).toBe(Date.UTC(2024, 1, 29, 8));
    for (const bad of ['2026-11-01T08:00:00', '2026-02-29T08:00:00Z', '2026-11-01T24:00:00Z', '2026-11-01', 'Nov 1 2026 08:00:00 GMT', 1793520000, null]) {
      expect(parseHealthKitDate(bad)).toBeNaN();
    }
  });

  it('converts with cached per-unit converters that give exactly toStorageUnit’s results (contracts §4; units.ts)', () => {
    const pairs: [string, string, number[]][] = [
      ['body_mass', 'lb', [154.3, 0.1, 400]],
      ['body_temperature', 'degF', [98.6, 101.3, -4]],
      ['active_energy_burned', 'kJ', [418.4, 1, 1234.567]],
      ['heart_rate', 'count/s', [1.3, 0.9]],
      ['walking_running_distance', 'mi', [3.1, 26.2]],
      ['dietary_water', 'fl_oz_us', [8]],
    ];
    for (const [type, unit, values] of pairs) {
      const fn = storageUnitConverter(type, unit)!;
      for (const v of values) expect(fn(v)).toBe(toStorageUnit(type, v, unit).value);
    }
    expect(storageUnitConverter('heart_rate', 'kg')).toBeNull();
  });

  it('has the catalog types this parser needs, with storage unit, UCUM unit and LOINC code (contracts §4)', () => {
    const entry = (t: string) => {
      const q = findQuantityType(t)!;
      return [q.unit, q.ucum_unit, q.loinc_code, q.healthkit];
    };
    expect(entry('blood_pressure_systolic')).toEqual(['mmHg', 'mm[Hg]', '8480-6', 'HKQuantityTypeIdentifierBloodPressureSystolic']);
    expect(entry('blood_pressure_diastolic')).toEqual(['mmHg', 'mm[Hg]', '8462-4', 'HKQuantityTypeIdentifierBloodPressureDiastolic']);
    expect(entry('blood_glucose')).toEqual(['mg/dL', 'mg/dL', '2339-0', 'HKQuantityTypeIdentifierBloodGlucose']);
    expect(entry('height')).toEqual(['m', 'm', '8302-2', 'HKQuantityTypeIdentifierHeight']);
    expect(entry('body_mass_index')).toEqual(['count', 'kg/m2', '39156-5', 'HKQuantityTypeIdentifierBodyMassIndex']);
    expect(entry('walking_running_distance')).toEqual(['m', 'm', null, 'HKQuantityTypeIdentifierDistanceWalkingRunning']);
  });

  it('stops cleanly when the consumer stops early', async () => {
    const text = Array.from({ length: 5000 }, (_, i) => line({ kind: 'quantity', uuid: `S-${i}`, type: 'HKQuantityTypeIdentifierStepCount', value: i, unit: 'count', start_date: '2026-11-01T08:00:00Z', end_date: '2026-11-01T08:01:00Z' })).join('\n');
    let n = 0;
    for await (const item of healthKitParser.parse(gzipSync(text), { provider: 'device-a', receivedAt: '2026-11-22T00:00:00.000Z', dataType: null })) {
      expect('record' in item).toBe(true);
      if (++n === 10) break;
    }
    expect(n).toBe(10);
  });
});

describe('healthKitParser: streaming (records.ts DeviceParser: a big upload never sits in memory as objects)', () => {
  it('parses 200k generated quantity lines one at a time', async () => {
    const N = 200_000;
    const gzip = createGzip();
    const out: Buffer[] = [];
    gzip.on('data', (b: Buffer) => out.push(b));
    const done = new Promise((resolve) => gzip.on('end', resolve));
    const base = Date.UTC(2026, 10, 1);
    const units = ['count/min', 'count/s'];
    for (let b = 0; b < N; b += 10_000) {
      let chunk = '';
      for (let i = b; i < b + 10_000; i++) {
        const t = new Date(base + i * 5000).toISOString();
        const unit = units[i % 50 === 0 ? 1 : 0]!;
        chunk += `{"kind":"quantity","uuid":"00000000-0000-4000-8000-${String(i).padStart(12, '0')}","type":"HKQuantityTypeIdentifierHeartRate","value":${unit === 'count/s' ? 1.2 : 60 + (i % 40)},"unit":"${unit}","start_date":"${t}","end_date":"${t}","source_name":"Apple Watch","source_bundle_id":"com.apple.health.1A2B","device_model":"Watch","product_type":"Watch7,1","was_user_entered":false,"metadata":{"HKTimeZone":"Europe/Berlin"}}\n`;
      }
      gzip.write(chunk);
    }
    gzip.end();
    await done;
    const gz = Buffer.concat(out);

    const started = performance.now();
    let records = 0;
    let rejected = 0;
    let converted = 0;
    let last: QuantityRecord | undefined;
    for await (const item of healthKitParser.parse(gz, { provider: 'device-a', receivedAt: '2026-11-22T00:00:00.000Z', dataType: null })) {
      if ('rejected' in item) rejected++;
      else {
        records++;
        last = item.record as QuantityRecord;
        if (last.metadata.original_unit === 'count/s') converted++;
      }
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(`device-a: ${N} quantity lines (${(gz.length / 1048576).toFixed(1)} MiB gzip) in ${seconds.toFixed(2)} s = ${Math.round(N / seconds)} lines/s`);
    expect(records).toBe(N);
    expect(rejected).toBe(0);
    expect(converted).toBe(N / 50);
    expect(last).toMatchObject({ external_id: `00000000-0000-4000-8000-${String(N - 1).padStart(12, '0')}`, type: 'heart_rate' });
  });
});
