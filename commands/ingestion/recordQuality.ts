import { categoryClass } from '../../src/catalog/intervalBounds.js';
import { FUTURE_TOLERANCE_MS, PLAUSIBLE_SLEEP_MS, PLAUSIBLE_WORKOUT_MS, type QualityFlag } from '../../src/catalog/qualityFlags.js';
import { isPlausibleValue } from '../../src/catalog/quantityCatalog.js';
import type { Metadata, NormalizedRecord, RecordKind } from './records.js';

/**
 * The quality flags of a normalised record (contracts §15, docs/quality.md), judged against the
 * time the service received it, never the clock: the same record and receipt give the same flags,
 * so the events carry them and a rebuild stores what the live projection stored. Every source's
 * records are flagged here on their way to the log (src/processes/etl/withinBounds.ts), after the
 * hard bounds (recordBounds.ts) have let them through.
 */
export function qualityFlagsOf(r: NormalizedRecord, receivedAt: string): QualityFlag[] {
  const flags: QualityFlag[] = [];
  if (hasImplausibleValue(r)) flags.push('implausible_value');
  if (hasImplausibleDuration(r)) flags.push('implausible_duration');
  if (endsInFuture(r, Date.parse(receivedAt) + FUTURE_TOLERANCE_MS)) flags.push('future');
  if (enteredByHand(r)) flags.push('manual');
  return flags;
}

/**
 * Which fields of each kind hold a value of a catalog quantity type: a value outside that type's
 * range is implausible wherever it appears (a workout's average heart rate is held to the heart
 * rate's range). Quantity samples and observation components name their own type.
 */
const VALUE_FIELDS: Partial<Record<RecordKind, Readonly<Record<string, string>>>> = {
  sleep_session: { hrv_avg_ms: 'hrv_sdnn', resting_hr: 'resting_heart_rate', respiratory_rate: 'respiratory_rate', spo2_avg: 'oxygen_saturation', sleep_score: 'sleep_score' },
  workout: { active_energy_kcal: 'active_energy_burned', distance_m: 'distance', avg_heart_rate: 'heart_rate', max_heart_rate: 'heart_rate', steps: 'step_count' },
  daily_summary: { steps: 'step_count', active_energy_kcal: 'active_energy_burned', distance_m: 'distance', resting_heart_rate: 'resting_heart_rate', avg_heart_rate: 'heart_rate' },
  ecg: { average_heart_rate: 'heart_rate' },
  nutrition: {
    energy_kcal: 'dietary_energy_consumed',
    protein_g: 'dietary_protein',
    carbohydrates_g: 'dietary_carbohydrates',
    fat_g: 'dietary_fat_total',
    fiber_g: 'dietary_fiber',
    sugar_g: 'dietary_sugar',
    sodium_mg: 'dietary_sodium',
    water_ml: 'dietary_water',
  },
};

function hasImplausibleValue(r: NormalizedRecord): boolean {
  if (r.kind === 'quantity') return !isPlausibleValue(r.type, r.value);
  if (r.kind === 'observation') return r.components.some((c) => !isPlausibleValue(c.code, c.value));
  const fields = VALUE_FIELDS[r.kind];
  if (!fields) return false;
  const rec = r as unknown as Record<string, unknown>;
  for (const [field, type] of Object.entries(fields)) {
    const v = rec[field];
    if (typeof v === 'number' && !isPlausibleValue(type, v)) return true;
  }
  return false;
}

function hasImplausibleDuration(r: NormalizedRecord): boolean {
  if (r.kind === 'sleep_session') return Date.parse(r.bedtime_end) - Date.parse(r.bedtime_start) > PLAUSIBLE_SLEEP_MS;
  if (r.kind === 'workout') return Date.parse(r.end_date) - Date.parse(r.start_date) > PLAUSIBLE_WORKOUT_MS;
  return false;
}

/** The earliest UTC offset in use (UTC+14): a local date has begun somewhere once it is this long before its UTC midnight. */
const EARLIEST_OFFSET_MS = 14 * 3_600_000;
const dateBegins = (day: string): number => Date.parse(`${day}T00:00:00Z`) - EARLIEST_OFFSET_MS;

/**
 * Whether the record ends after `latest` (the receipt plus the tolerance). A day's summary or a
 * cycle is dated, not timed: it is in the future when its date has not begun anywhere on Earth at
 * the receipt (today's summary, still counting, is not). A state (a pregnancy) may have a planned
 * end, so only its start counts.
 */
function endsInFuture(r: NormalizedRecord, latest: number): boolean {
  switch (r.kind) {
    case 'sleep_session':
      return Date.parse(r.bedtime_end) > latest;
    case 'daily_summary':
      return dateBegins(r.date) > latest;
    case 'menstrual_cycle':
      return dateBegins(r.start_date) > latest;
    case 'category':
      return Date.parse(categoryClass(r.type) === 'state' ? r.start_date : r.end_date) > latest;
    default:
      return Date.parse(r.end_date) > latest;
  }
}

/**
 * Entered by hand, by the source's own marker: a sample's `was_user_entered` (HealthKit
 * `HKWasUserEntered`, Health Connect's manual recording method, providers' manual flags, as each
 * parser reads them), or for the other kinds the same markers kept in the record's metadata.
 */
function enteredByHand(r: NormalizedRecord): boolean {
  if ((r.kind === 'quantity' || r.kind === 'category') && r.was_user_entered) return true;
  return manualMetadata(r.metadata);
}

/** Health Connect's RECORDING_METHOD_MANUAL_ENTRY, by number or by name. */
const HEALTH_CONNECT_MANUAL = 3;

function manualMetadata(md: Metadata | undefined): boolean {
  if (!md) return false;
  const hk = md.HKWasUserEntered;
  if (hk === true || hk === 1 || hk === '1' || hk === 'true') return true;
  if (md.was_user_entered === true) return true;
  const method = md.recordingMethod ?? md.recording_method;
  if (method === HEALTH_CONNECT_MANUAL || (typeof method === 'string' && /MANUAL_ENTRY$/i.test(method))) return true;
  // Strava's `manual`, Fitbit's `logType` (kept as `log_type` by its decoders) as the providers send them.
  return md.manual === true || md.logType === 'manual' || md.log_type === 'manual';
}
