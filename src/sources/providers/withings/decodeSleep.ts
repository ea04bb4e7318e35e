import type { CategoryRecord, NormalizedRecord, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, isObject, optionalNumber, quantity, RecordError, type Json } from '../../shared/connectorRecords.js';
import { iso } from '../../shared/providerTimes.js';
import { SLEEP_MODELS, withingsProvenance } from './provenance.js';
import { epochSeconds } from './withingsAnswer.js';

/**
 * Withings sleep answers come in two shapes under one data type: `getsummary` nights (`data`
 * holds durations in seconds, heart and breathing rates, the sleep score) become sleep sessions;
 * `get` segments (`state` with its start and end) become sleep_analysis samples, the stages of
 * the night. Both are stored as sent and told apart by their fields.
 */
export function decodeSleepEntry(entry: Json, body: Json): NormalizedRecord[] {
  if ('state' in entry) return [sleepState(entry, body), ...sleepSeries(entry, body)];
  return [sleepSummary(entry, body)];
}

/** `get` series asked with `data_fields=hr,rr`: `{"<epoch seconds>": value}` per segment. */
const SERIES: readonly { field: string; type: string; unit: string; max: number }[] = [
  { field: 'hr', type: 'heart_rate', unit: 'count/min', max: 300 },
  { field: 'rr', type: 'respiratory_rate', unit: 'count/min', max: 100 },
];

function sleepSeries(seg: Json, body: Json): NormalizedRecord[] {
  const m = modelOf(seg.model ?? body.model);
  const p = withingsProvenance(m.device, m.bodyWorn);
  const out: NormalizedRecord[] = [];
  for (const s of SERIES) {
    const series = seg[s.field];
    if (series === undefined || series === null) continue;
    if (!isObject(series)) throw new RecordError(`${s.field} is not an object of epoch seconds to values`);
    for (const [epoch, v] of Object.entries(series)) {
      const at = epochSeconds(/^\d+$/.test(epoch) ? Number(epoch) : epoch, `${s.field} key`);
      const value = optionalNumber(v, `${s.field}[${epoch}]`);
      if (!value) continue;
      if (value < 0 || value > s.max) throw new RecordError(`${s.field}[${epoch}] ${value} is not a plausible ${s.type}`);
      out.push(quantity(p, { external_id: `sleep${s.field}-${epoch}`, type: s.type, value, unit: s.unit, start: at, end: at, metadata: { timezone: null, context: 'sleep' } }));
    }
  }
  return out;
}

/** `get` states: 0 awake, 1 light, 2 deep, 3 REM, 4 entered by hand, 5 unspecified. */
const STATES: Readonly<Record<number, string>> = { 0: 'awake', 1: 'asleep_core', 2: 'asleep_deep', 3: 'asleep_rem', 4: 'asleep_unspecified', 5: 'asleep_unspecified' };
const MANUAL_STATE = 4;

function modelOf(v: unknown): { device: string | null; bodyWorn: boolean } {
  return (typeof v === 'number' && SLEEP_MODELS[v]) || { device: null, bodyWorn: false };
}

function sleepSummary(night: Json, body: Json): SleepSessionRecord {
  const start = epochSeconds(night.startdate, 'startdate');
  const end = epochSeconds(night.enddate, 'enddate');
  if (end <= start) throw new RecordError('enddate is not after startdate');
  const data = night.data;
  if (!isObject(data)) throw new RecordError('data is missing');
  const sec = (f: string) => {
    const v = optionalNumber(data[f], `data.${f}`);
    if (v !== null && (v < 0 || v > 86_400)) throw new RecordError(`data.${f} ${v} is not a duration of a night in seconds`);
    return v;
  };
  const deep = sec('deepsleepduration') ?? 0;
  const rem = sec('remsleepduration') ?? 0;
  const light = sec('lightsleepduration') ?? 0;
  const awake = sec('wakeupduration') ?? 0;
  const total = sec('total_sleep_time') ?? deep + rem + light;
  const hrMin = optionalNumber(data.hr_min, 'data.hr_min');
  const rr = optionalNumber(data.rr_average, 'data.rr_average');
  const score = optionalNumber(data.sleep_score, 'data.sleep_score');
  const id = typeof night.id === 'number' || typeof night.id === 'string' ? String(night.id) : String(night.startdate);
  const m = modelOf(night.model);
  const timezone = typeof night.timezone === 'string' ? night.timezone : typeof body.timezone === 'string' ? body.timezone : null;
  return {
    kind: 'sleep_session',
    ...withingsProvenance(m.device, m.bodyWorn),
    external_id: `sleep-${id}`,
    bedtime_start: iso(start),
    bedtime_end: iso(end),
    total_sleep_seconds: Math.round(total),
    deep_sleep_seconds: Math.round(deep),
    rem_sleep_seconds: Math.round(rem),
    light_sleep_seconds: Math.round(light),
    awake_seconds: Math.round(awake),
    sleep_score: score,
    // Withings' summary has no HRV; the lowest heart rate of the night stands for the resting one.
    hrv_avg_ms: null,
    resting_hr: hrMin ? hrMin : null,
    respiratory_rate: rr ? rr : null,
    spo2_avg: null,
    phases: [],
    metadata: { ...fieldsExcept(night, ['data', 'timezone']), ...fieldsExcept(data, []), timezone },
  };
}

function sleepState(seg: Json, body: Json): CategoryRecord {
  const start = epochSeconds(seg.startdate, 'startdate');
  const end = epochSeconds(seg.enddate, 'enddate');
  if (end <= start) throw new RecordError('enddate is not after startdate');
  if (typeof seg.state !== 'number' || !(seg.state in STATES)) throw new RecordError(`state ${JSON.stringify(seg.state)} is not a Withings sleep state`);
  const m = modelOf(seg.model ?? body.model);
  return {
    kind: 'category',
    ...withingsProvenance(m.device, m.bodyWorn),
    external_id: `sleepstate-${seg.startdate}`,
    type: 'sleep_analysis',
    value: STATES[seg.state]!,
    start_date: iso(start),
    end_date: iso(end),
    source_name: null,
    source_bundle_id: null,
    device_model: null,
    product_type: null,
    was_user_entered: seg.state === MANUAL_STATE,
    metadata: { ...fieldsExcept(seg, ['startdate', 'enddate', 'hr', 'rr', 'snoring', 'sdnn_1', 'rmssd', 'mvt_score']), timezone: null },
  };
}
