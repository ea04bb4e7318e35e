import type { QualityFlag } from '../../src/catalog/qualityFlags.js';

/**
 * The normalised record kinds (spec "What the service does" 4). Parsers of every provider
 * produce these; ingestion events carry them; projections store them. Times are RFC 3339 UTC
 * strings with milliseconds (`toISOString()`), values are in the storage unit of their type.
 *
 * `external_id` is the provider's own identifier (HealthKit uuid, Health Connect metadata.id,
 * or a key derived from the device's table and timestamp): re-sending a record with the same
 * external_id updates it, never duplicates it.
 */
export type Provenance = {
  /** The integration it came through (device-a, device-b, device-c, or a connector slug). */
  provider: string;
  /** The vendor that produced it (see docs/sources.md); the provider when unknown. */
  source: string;
  /** Human-readable device, e.g. "Apple Watch (Watch7,1)"; null when unknown. */
  device: string | null;
  /** True when the stream comes from a body-worn sensor (watch, ring, band, chest strap). */
  body_worn: boolean;
};

export type Metadata = Record<string, unknown>;

/**
 * The record's quality flags (contracts §15, src/catalog/qualityFlags.ts), set once on the way to
 * the log (commands/ingestion/recordQuality.ts) so the events carry them. Parsers leave it out;
 * events stored before the flags existed lack it and are flagged when projected.
 */
export type Quality = { quality?: QualityFlag[] };

/** What a quantity and a category sample share: its interval, and where it was recorded in HealthKit's terms (null where the source does not say). */
export type SampleFields = {
  start_date: string;
  end_date: string;
  source_name: string | null;
  source_bundle_id: string | null;
  device_model: string | null;
  product_type: string | null;
  was_user_entered: boolean;
};

export type QuantityRecord = Provenance & Quality & SampleFields & {
  kind: 'quantity';
  external_id: string;
  type: string;
  value: number;
  unit: string;
  /** Provider fields as sent, plus timezone, original_value and original_unit. */
  metadata: Metadata;
};

export type CategoryRecord = Provenance & Quality & SampleFields & {
  kind: 'category';
  external_id: string;
  /** Canonical category type, e.g. sleep_analysis, menstrual_flow, mindful_session. */
  type: string;
  /** Canonical value, e.g. asleep_deep, medium; the provider's own value stays in metadata. */
  value: string;
  metadata: Metadata;
};

export type SleepPhase = { phase: 'deep' | 'rem' | 'light' | 'awake' | 'asleep' | 'in_bed'; start_date: string; end_date: string };

export type SleepSessionRecord = Provenance & Quality & {
  kind: 'sleep_session';
  external_id: string;
  bedtime_start: string;
  bedtime_end: string;
  total_sleep_seconds: number;
  deep_sleep_seconds: number;
  rem_sleep_seconds: number;
  light_sleep_seconds: number;
  awake_seconds: number;
  sleep_score: number | null;
  hrv_avg_ms: number | null;
  resting_hr: number | null;
  respiratory_rate: number | null;
  spo2_avg: number | null;
  phases: SleepPhase[];
  metadata: Metadata;
};

export type RoutePoint = {
  timestamp: string;
  latitude: number;
  longitude: number;
  altitude_m: number | null;
  speed_mps: number | null;
  course_deg: number | null;
  horizontal_accuracy_m: number | null;
};

export type WorkoutRecord = Provenance & Quality & {
  kind: 'workout';
  external_id: string;
  /** Canonical activity, e.g. running, cycling, walking, swimming, strength_training, other. */
  type: string;
  start_date: string;
  end_date: string;
  duration_s: number;
  active_energy_kcal: number | null;
  distance_m: number | null;
  avg_heart_rate: number | null;
  max_heart_rate: number | null;
  steps: number | null;
  route: RoutePoint[];
  metadata: Metadata;
};

export type NutritionRecord = Provenance & Quality & {
  kind: 'nutrition';
  external_id: string;
  start_date: string;
  end_date: string;
  name: string | null;
  meal_type: string | null;
  energy_kcal: number | null;
  protein_g: number | null;
  carbohydrates_g: number | null;
  fat_g: number | null;
  fiber_g: number | null;
  sugar_g: number | null;
  sodium_mg: number | null;
  water_ml: number | null;
  /** Every other nutrient as sent, converted to g/mg/µg/kcal/mL where the unit was known. */
  nutrients: Record<string, { value: number; unit: string }>;
  metadata: Metadata;
};

export type EcgRecord = Provenance & Quality & {
  kind: 'ecg';
  external_id: string;
  start_date: string;
  end_date: string;
  classification: string | null;
  classification_value: number | null;
  symptoms_status: string | null;
  average_heart_rate: number | null;
  sampling_frequency_hz: number | null;
  number_of_measurements: number;
  /** Microvolts, one per measurement, in order. */
  voltages: number[];
  metadata: Metadata;
};

export type HeartbeatSeriesRecord = Provenance & Quality & {
  kind: 'heartbeat_series';
  external_id: string;
  start_date: string;
  end_date: string;
  /** Beat times as offsets in seconds from start_date; `preceded_by_gap` marks a beat after missing data. */
  beats: { offset_s: number; preceded_by_gap: boolean }[];
  metadata: Metadata;
};

export type DailySummaryRecord = Provenance & Quality & {
  kind: 'daily_summary';
  external_id: string;
  /** Local calendar date, YYYY-MM-DD. */
  date: string;
  steps: number | null;
  active_energy_kcal: number | null;
  distance_m: number | null;
  resting_heart_rate: number | null;
  avg_heart_rate: number | null;
  sleep_seconds: number | null;
  metadata: Metadata;
};

export type MenstrualCycleRecord = Provenance & Quality & {
  kind: 'menstrual_cycle';
  external_id: string;
  /** YYYY-MM-DD of the first day of bleeding. */
  start_date: string;
  /** YYYY-MM-DD of the last day of the period, null while ongoing. */
  period_end_date: string | null;
  period_length_days: number | null;
  /** Days to the next cycle's start, null for the latest cycle. */
  cycle_length_days: number | null;
  flow: Record<string, string>;
  metadata: Metadata;
};

export type ObservationRecord = Provenance & Quality & {
  kind: 'observation';
  external_id: string;
  /** e.g. blood_pressure, blood_glucose. */
  code: string;
  loinc_code: string | null;
  start_date: string;
  end_date: string;
  components: { code: string; loinc_code: string | null; value: number; unit: string }[];
  metadata: Metadata;
};

export type NormalizedRecord =
  | QuantityRecord
  | CategoryRecord
  | SleepSessionRecord
  | WorkoutRecord
  | NutritionRecord
  | EcgRecord
  | HeartbeatSeriesRecord
  | DailySummaryRecord
  | MenstrualCycleRecord
  | ObservationRecord;

export type RecordKind = NormalizedRecord['kind'];

/** A line or object the ETL could not store, kept for inspection (spec "Coverage report"). */
export type RejectedItem = {
  /** 1-based line (NDJSON) or record index (JSON), or a table:rowid for SQLite exports. */
  location: string;
  reason: string;
  /** At most 1 KiB of the offending input. */
  excerpt: string;
};

export type ParseItem = { record: NormalizedRecord } | { rejected: RejectedItem };

export type ParseContext = {
  provider: string;
  /** When the payload was received. Parsers judge plausibility against it, never the clock, so a re-run gives the same records. */
  receivedAt: string;
  /**
   * For a payload pulled from or pushed by a provider: the provider's data type the payload holds
   * (`PulledPayload.dataType`, src/sources/shared/pullConnector.ts), which picks its decoder. Null for
   * device uploads, whose format is the provider itself.
   */
  dataType: string | null;
  /**
   * Whose upload it is, when the pipeline runs the decoder. Only ever names a decoder's temporary
   * copies (exportShared/temporaryFile.ts), so that the user's erasure finds them; never read into
   * a record.
   */
  userId?: string;
};

/**
 * A device upload format. `parse` streams: a million-line upload never sits in memory as
 * objects, and records that need the whole upload (sleep nights, cycles) come at the end.
 */
export interface DeviceParser {
  slug: string;
  parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem>;
}

/**
 * Limits of one ingestion event (`<kind>.ingested`, `records.rejected`). The size keeps every
 * event well under KurrentDB's default 1 MiB append; the count bounds the transaction a
 * projection applies one event in. A single record larger than the size limit (a long workout
 * route) still goes, alone in its event.
 */
export const MAX_EVENT_JSON_BYTES = 512 * 1024;
export const MAX_RECORDS_PER_EVENT = 1000;

export const INGESTED_EVENT: Record<RecordKind, string> = {
  quantity: 'samples.ingested',
  category: 'category_samples.ingested',
  sleep_session: 'sleep_sessions.ingested',
  workout: 'workouts.ingested',
  nutrition: 'nutrition.ingested',
  ecg: 'ecg.ingested',
  heartbeat_series: 'heartbeat_series.ingested',
  daily_summary: 'daily_summaries.ingested',
  menstrual_cycle: 'menstrual_cycles.ingested',
  observation: 'observations.ingested',
};
