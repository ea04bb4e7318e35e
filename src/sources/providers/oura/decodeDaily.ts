import type { DailySummaryRecord, Metadata, NormalizedRecord, Provenance } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, optionalNumber, quantity, RecordError, type Json } from '../../shared/connectorRecords.js';
import { DAY_MS, readDate, readInstant } from '../../shared/providerTimes.js';

/**
 * Oura's daily documents: one per user and `day` (the local date), re-computed during the day, so
 * every record is named by the day and a later pull updates it. `timestamp` is the start of
 * Oura's day at the user's offset: the interval of the day's totals and the offset in metadata.
 */

type Day = { day: string; start: number; zone: Metadata };

function dayOf(doc: Json): Day {
  const day = readDate(doc.day, 'day');
  if (doc.timestamp === undefined || doc.timestamp === null) return { day, start: Date.parse(`${day}T00:00:00Z`), zone: {} };
  const t = readInstant(doc.timestamp, 'timestamp');
  return { day, start: t.ms, zone: { timezone: t.offset } };
}

/** Series that become no record and would make every sample's metadata large. */
const ACTIVITY_SERIES = ['class_5_min', 'met'];

export function decodeDailyActivity(doc: Json, p: Provenance): NormalizedRecord[] {
  const d = dayOf(doc);
  const steps = optionalNumber(doc.steps, 'steps');
  const active = optionalNumber(doc.active_calories, 'active_calories');
  const total = optionalNumber(doc.total_calories, 'total_calories');
  const distance = optionalNumber(doc.equivalent_walking_distance, 'equivalent_walking_distance');
  for (const [v, f] of [[steps, 'steps'], [active, 'active_calories'], [total, 'total_calories'], [distance, 'equivalent_walking_distance']] as const) {
    if (v !== null && v < 0) throw new RecordError(`${f} is negative`);
  }
  const metadata: Metadata = { ...fieldsExcept(doc, ACTIVITY_SERIES), ...d.zone };
  const id = `daily_activity:${d.day}`;
  const summary: DailySummaryRecord = {
    kind: 'daily_summary',
    ...p,
    external_id: id,
    date: d.day,
    steps,
    active_energy_kcal: active,
    // Oura's own estimate from movement, not a measured track: named so in docs/connectors/oura.md.
    distance_m: distance,
    resting_heart_rate: null,
    avg_heart_rate: null,
    sleep_seconds: null,
    metadata,
  };
  const span = { start: d.start, end: d.start + DAY_MS, metadata: { ...d.zone, day: d.day } };
  const out: NormalizedRecord[] = [summary];
  if (steps !== null) out.push(quantity(p, { ...span, external_id: `${id}:steps`, type: 'step_count', value: steps, unit: 'count' }));
  if (active !== null) out.push(quantity(p, { ...span, external_id: `${id}:active_energy`, type: 'active_energy_burned', value: active, unit: 'kcal' }));
  if (total !== null) out.push(quantity(p, { ...span, external_id: `${id}:total_energy`, type: 'total_energy_burned', value: total, unit: 'kcal' }));
  return out;
}

function score(doc: Json): number | null {
  const s = optionalNumber(doc.score, 'score');
  if (s !== null && (s < 0 || s > 100)) throw new RecordError(`score ${s} is outside 0..100`);
  return s;
}

/** The night's sleep score; a day Oura has not scored yet (score null) gives nothing until it has. */
export function decodeDailySleep(doc: Json, p: Provenance): NormalizedRecord[] {
  const d = dayOf(doc);
  const s = score(doc);
  if (s === null) return [];
  return [quantity(p, { external_id: `daily_sleep:${d.day}`, type: 'sleep_score', value: s, unit: 'count', start: d.start, end: d.start, metadata: { ...fieldsExcept(doc, ['score']), ...d.zone } })];
}

/** Readiness score; the temperature deviations (from the user's own baseline, °C) stay in metadata. */
export function decodeDailyReadiness(doc: Json, p: Provenance): NormalizedRecord[] {
  const d = dayOf(doc);
  const s = score(doc);
  if (s === null) return [];
  optionalNumber(doc.temperature_deviation, 'temperature_deviation');
  return [quantity(p, { external_id: `daily_readiness:${d.day}`, type: 'readiness_score', value: s, unit: 'count', start: d.start, end: d.start, metadata: { ...fieldsExcept(doc, ['score']), ...d.zone } })];
}

/** The night's average SpO2 (`spo2_percentage.average`, %); null until the ring has measured it. */
export function decodeDailySpo2(doc: Json, p: Provenance): NormalizedRecord[] {
  const d = dayOf(doc);
  const pct = doc.spo2_percentage;
  if (pct === undefined || pct === null) return [];
  if (typeof pct !== 'object' || Array.isArray(pct)) throw new RecordError('spo2_percentage is not an object');
  const avg = optionalNumber((pct as Json).average, 'spo2_percentage.average');
  if (avg === null) return [];
  if (avg < 50 || avg > 100) throw new RecordError(`spo2_percentage.average ${avg} is outside 50..100`);
  return [quantity(p, { external_id: `daily_spo2:${d.day}`, type: 'oxygen_saturation', value: avg, unit: '%', start: d.start, end: d.start, metadata: { ...fieldsExcept(doc, ['spo2_percentage']), ...d.zone } })];
}
