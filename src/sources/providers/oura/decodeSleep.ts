import type { NormalizedRecord, Provenance, SleepPhase, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, optionalNumber, quantity, RecordError, requiredString, type Json } from '../../shared/connectorRecords.js';
import { iso, readInstant } from '../../shared/providerTimes.js';
import { PHASE_BY_CODE, SLEEP_TYPES } from './vocabulary.js';

/**
 * Oura sleep periods (`/v2/usercollection/sleep`): one per period in bed, named by Oura's id.
 * Durations are seconds. The hypnogram `sleep_phase_5_min` (one character per five minutes from
 * bedtime_start) becomes the phases; the HRV series (`hrv`, RMSSD in ms, one item per
 * `interval` seconds, null where the ring had no reading) becomes hrv_rmssd samples. The
 * heart-rate series is left out: the heartrate collection carries the same readings.
 */

const PHASE_MS = 300_000;
const SERIES = ['sleep_phase_5_min', 'movement_30_sec', 'heart_rate', 'hrv'];

type Series = { start: number; intervalMs: number; items: (number | null)[] };

function series(v: unknown, field: string): Series | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) throw new RecordError(`${field} is not a sample series`);
  const s = v as Json;
  const interval = optionalNumber(s.interval, `${field}.interval`);
  if (interval === null || interval <= 0) throw new RecordError(`${field}.interval is missing or not positive`);
  if (!Array.isArray(s.items)) throw new RecordError(`${field}.items is not an array`);
  const items = s.items.map((x: unknown, i: number) => optionalNumber(x, `${field}.items[${i}]`));
  return { start: readInstant(s.timestamp, `${field}.timestamp`).ms, intervalMs: interval * 1000, items };
}

/** Runs of equal characters of the hypnogram, cut at bedtime_end. An unknown code is a gap. */
export function hypnogram(codes: string, start: number, end: number): SleepPhase[] {
  const phases: SleepPhase[] = [];
  let i = 0;
  while (i < codes.length) {
    let j = i + 1;
    while (j < codes.length && codes[j] === codes[i]) j++;
    const phase = PHASE_BY_CODE[codes[i]!];
    const a = start + i * PHASE_MS;
    const b = Math.min(start + j * PHASE_MS, end);
    if (phase && a < b) phases.push({ phase, start_date: iso(a), end_date: iso(b) });
    i = j;
  }
  return phases;
}

const seconds = (doc: Json, field: string): number => {
  const v = optionalNumber(doc[field], field);
  if (v !== null && v < 0) throw new RecordError(`${field} is negative`);
  return Math.round(v ?? 0);
};

export function decodeSleep(doc: Json, p: Provenance): NormalizedRecord[] {
  const id = requiredString(doc.id, 'id');
  const type = typeof doc.type === 'string' ? doc.type : 'sleep';
  // Rest-mode periods are not sleep; a deleted period is the user's own correction.
  if (!SLEEP_TYPES.has(type)) return [];
  const start = readInstant(doc.bedtime_start, 'bedtime_start');
  const end = readInstant(doc.bedtime_end, 'bedtime_end');
  if (end.ms <= start.ms) throw new RecordError('bedtime_end is not after bedtime_start');
  if (doc.sleep_phase_5_min !== undefined && doc.sleep_phase_5_min !== null && typeof doc.sleep_phase_5_min !== 'string') {
    throw new RecordError('sleep_phase_5_min is not a string');
  }
  const deep = seconds(doc, 'deep_sleep_duration');
  const rem = seconds(doc, 'rem_sleep_duration');
  const light = seconds(doc, 'light_sleep_duration');
  const total = doc.total_sleep_duration === null || doc.total_sleep_duration === undefined ? deep + rem + light : seconds(doc, 'total_sleep_duration');
  const hrv = optionalNumber(doc.average_hrv, 'average_hrv');
  const lowest = optionalNumber(doc.lowest_heart_rate, 'lowest_heart_rate');
  const breath = optionalNumber(doc.average_breath, 'average_breath');
  const zone = { timezone: start.offset, ...(end.offset !== start.offset ? { end_timezone: end.offset } : {}) };
  const ext = `sleep:${id}`;
  const session: SleepSessionRecord = {
    kind: 'sleep_session',
    ...p,
    external_id: ext,
    bedtime_start: iso(start.ms),
    bedtime_end: iso(end.ms),
    total_sleep_seconds: total,
    deep_sleep_seconds: deep,
    rem_sleep_seconds: rem,
    light_sleep_seconds: light,
    awake_seconds: seconds(doc, 'awake_time'),
    // Oura scores the day, not the period: the score is the sleep_score sample of daily_sleep.
    sleep_score: null,
    hrv_avg_ms: hrv,
    resting_hr: lowest,
    respiratory_rate: breath,
    spo2_avg: null,
    phases: typeof doc.sleep_phase_5_min === 'string' ? hypnogram(doc.sleep_phase_5_min, start.ms, end.ms) : [],
    metadata: { ...fieldsExcept(doc, SERIES), ...zone, hrv_kind: 'rmssd' },
  };
  const out: NormalizedRecord[] = [session];
  const hrvSeries = series(doc.hrv, 'hrv');
  hrvSeries?.items.forEach((v, i) => {
    if (v === null || v <= 0) return;
    const t = hrvSeries.start + i * hrvSeries.intervalMs;
    out.push(quantity(p, { external_id: `${ext}:hrv:${i}`, type: 'hrv_rmssd', value: v, unit: 'ms', start: t, end: t, metadata: { ...zone, sleep_id: id } }));
  });
  // The main sleep's lowest heart rate is Oura's resting heart rate; its breathing rate the night's.
  if (type === 'long_sleep') {
    const night = { start: start.ms, end: end.ms, metadata: { ...zone, sleep_id: id } };
    if (lowest !== null) out.push(quantity(p, { ...night, external_id: `${ext}:resting_heart_rate`, type: 'resting_heart_rate', value: lowest, unit: 'count/min' }));
    if (breath !== null) out.push(quantity(p, { ...night, external_id: `${ext}:respiratory_rate`, type: 'respiratory_rate', value: breath, unit: 'count/min' }));
  }
  return out;
}
