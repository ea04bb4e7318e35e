import type {
  CategoryRecord,
  DailySummaryRecord,
  EcgRecord,
  HeartbeatSeriesRecord,
  MenstrualCycleRecord,
  NutritionRecord,
  ObservationRecord,
  Provenance,
  RoutePoint,
  SleepPhase,
  SleepSessionRecord,
  WorkoutRecord,
} from '../../../commands/ingestion/records.js';

/**
 * Normalised records as the parsers produce them, with every field filled; tests override what
 * they look at. Provenance defaults to an Apple Watch stream through device-a.
 */
export const PROV: Provenance = { provider: 'device-a', source: 'apple', device: 'Apple Watch (Watch7,1)', body_worn: true };

export const iso = (s: string) => new Date(s).toISOString();

export const category = (o: Partial<CategoryRecord> = {}): CategoryRecord => ({
  kind: 'category',
  external_id: 'cat-1',
  type: 'sleep_analysis',
  value: 'asleep_deep',
  start_date: iso('2026-11-01T23:00:00Z'),
  end_date: iso('2026-11-01T23:30:00Z'),
  source_name: 'Apple Watch',
  source_bundle_id: 'com.apple.health.1A2B',
  device_model: 'Watch',
  product_type: 'Watch7,1',
  was_user_entered: false,
  metadata: { HKTimeZone: 'Europe/Berlin' },
  ...PROV,
  ...o,
});

export const phase = (p: SleepPhase['phase'], start: string, end: string): SleepPhase => ({ phase: p, start_date: iso(start), end_date: iso(end) });

export const sleepSession = (o: Partial<SleepSessionRecord> = {}): SleepSessionRecord => ({
  kind: 'sleep_session',
  external_id: 'night-1',
  bedtime_start: iso('2026-11-01T22:00:00Z'),
  bedtime_end: iso('2026-11-02T06:00:00Z'),
  total_sleep_seconds: 25_200,
  deep_sleep_seconds: 5_400,
  rem_sleep_seconds: 6_300,
  light_sleep_seconds: 13_500,
  awake_seconds: 3_600,
  sleep_score: 82,
  hrv_avg_ms: 48.5,
  resting_hr: 52,
  respiratory_rate: 14.2,
  spo2_avg: 96.5,
  phases: [phase('light', '2026-11-01T22:00:00Z', '2026-11-01T23:00:00Z'), phase('deep', '2026-11-01T23:00:00Z', '2026-11-02T00:30:00Z'), phase('rem', '2026-11-02T00:30:00Z', '2026-11-02T06:00:00Z')],
  metadata: {},
  ...PROV,
  ...o,
});

export const point = (timestamp: string, latitude: number, longitude: number, altitude_m: number | null = null): RoutePoint => ({
  timestamp: iso(timestamp),
  latitude,
  longitude,
  altitude_m,
  speed_mps: 3.2,
  course_deg: 90,
  horizontal_accuracy_m: 5,
});

export const workout = (o: Partial<WorkoutRecord> = {}): WorkoutRecord => ({
  kind: 'workout',
  external_id: 'run-1',
  type: 'running',
  start_date: iso('2026-11-01T07:00:00Z'),
  end_date: iso('2026-11-01T08:00:00Z'),
  duration_s: 3600,
  active_energy_kcal: 650,
  distance_m: 10_000,
  avg_heart_rate: 148,
  max_heart_rate: 176,
  steps: 9_800,
  route: [],
  metadata: {},
  ...PROV,
  ...o,
});

export const nutrition = (o: Partial<NutritionRecord> = {}): NutritionRecord => ({
  kind: 'nutrition',
  external_id: 'meal-1',
  start_date: iso('2026-11-01T12:00:00Z'),
  end_date: iso('2026-11-01T12:00:00Z'),
  name: 'Pasta',
  meal_type: 'lunch',
  energy_kcal: 640,
  protein_g: 22,
  carbohydrates_g: 95,
  fat_g: 18,
  fiber_g: 6,
  sugar_g: 8,
  sodium_mg: 900,
  water_ml: null,
  nutrients: { iron: { value: 4.1, unit: 'mg' } },
  metadata: {},
  ...PROV,
  source: 'myfitnesspal',
  body_worn: false,
  ...o,
});

export const daily = (o: Partial<DailySummaryRecord> = {}): DailySummaryRecord => ({
  kind: 'daily_summary',
  external_id: 'day-2026-11-01',
  date: '2026-11-01',
  steps: 10_234,
  active_energy_kcal: 540,
  distance_m: 7_800,
  resting_heart_rate: 54,
  avg_heart_rate: 71,
  sleep_seconds: 25_200,
  metadata: {},
  ...PROV,
  ...o,
});

export const ecg = (o: Partial<EcgRecord> = {}): EcgRecord => ({
  kind: 'ecg',
  external_id: 'ecg-1',
  start_date: iso('2026-11-01T09:00:00Z'),
  end_date: iso('2026-11-01T09:00:30Z'),
  classification: 'sinusRhythm',
  classification_value: 1,
  symptoms_status: 'none',
  average_heart_rate: 64,
  sampling_frequency_hz: 512,
  number_of_measurements: 4,
  voltages: [12.5, -3.25, 101, 7],
  metadata: {},
  ...PROV,
  ...o,
});

export const heartbeats = (o: Partial<HeartbeatSeriesRecord> = {}): HeartbeatSeriesRecord => ({
  kind: 'heartbeat_series',
  external_id: 'hb-1',
  start_date: iso('2026-11-01T03:00:00Z'),
  end_date: iso('2026-11-01T03:01:00Z'),
  beats: [
    { offset_s: 0, preceded_by_gap: false },
    { offset_s: 0.8, preceded_by_gap: false },
    { offset_s: 1.6, preceded_by_gap: false },
    { offset_s: 2.5, preceded_by_gap: false },
    { offset_s: 3.3, preceded_by_gap: true },
    { offset_s: 4.1, preceded_by_gap: false },
  ],
  metadata: {},
  ...PROV,
  ...o,
});

export const cycle = (o: Partial<MenstrualCycleRecord> = {}): MenstrualCycleRecord => ({
  kind: 'menstrual_cycle',
  external_id: 'cycle-1',
  start_date: '2026-10-03',
  period_end_date: '2026-10-07',
  period_length_days: 5,
  cycle_length_days: 28,
  flow: { '2026-10-03': 'medium', '2026-10-04': 'heavy' },
  metadata: {},
  ...PROV,
  body_worn: false,
  ...o,
});

export const observation = (o: Partial<ObservationRecord> = {}): ObservationRecord => ({
  kind: 'observation',
  external_id: 'bp-1',
  code: 'blood_pressure',
  loinc_code: '85354-9',
  start_date: iso('2026-11-01T08:00:00Z'),
  end_date: iso('2026-11-01T08:00:00Z'),
  components: [
    { code: 'blood_pressure_systolic', loinc_code: '8480-6', value: 120, unit: 'mmHg' },
    { code: 'blood_pressure_diastolic', loinc_code: '8462-4', value: 80, unit: 'mmHg' },
  ],
  metadata: {},
  ...PROV,
  source: 'omron',
  body_worn: false,
  ...o,
});
