import type { ParseItem, SleepPhase, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { RecordError, type Json } from '../../shared/recordError.js';
import { iso } from '../../shared/providerTimes.js';
import { zonedInstant, type LocalZone } from '../../shared/zonedLocalTime.js';
import { arrayAt, each, num, objectAt, PROVIDER, requireNum, zoneMetadata } from './fitbitPayload.js';
import { asleepOf, phaseTotals } from '../../derivations/sleepSessions.js';
import { SLEEP_LEVELS } from './vocabulary.js';

/**
 * Sleep logs (`/1.2/user/-/sleep/date/{start}/{end}.json`). A `stages` log lists its stretches in
 * `levels.data` and the short wakes (three minutes or less) within them in `levels.shortData`:
 * the short wakes cut the stretch they fall in, as Fitbit's own summary counts them. A `classic`
 * log (a night too short or too restless for stages) has asleep, restless and awake stretches.
 */
export function decodeSleep(answer: unknown, zone: LocalZone): ParseItem[] {
  const logs = arrayAt(objectAt(answer, 'answer').sleep, 'sleep');
  return logs.flatMap((log, i) => each(`sleep[${i}]`, log, () => [{ record: session(objectAt(log, `sleep[${i}]`), zone) }]));
}

type Stretch = { phase: SleepPhase['phase']; start: number; end: number };

function stretches(list: unknown[], zone: LocalZone, field: string): Stretch[] {
  return list.map((x, i) => {
    const s = objectAt(x, `${field}[${i}]`);
    const phase = typeof s.level === 'string' ? SLEEP_LEVELS[s.level] : undefined;
    if (!phase) throw new RecordError(`${field}[${i}].level ${JSON.stringify(s.level)} is not a sleep level`);
    const start = zonedInstant(s.dateTime, zone, `${field}[${i}].dateTime`).ms;
    const seconds = requireNum(s.seconds, `${field}[${i}].seconds`);
    if (seconds <= 0) throw new RecordError(`${field}[${i}].seconds is not positive`);
    return { phase, start, end: start + seconds * 1000 };
  });
}

/** Lays each short wake over the stretch it interrupts. */
function overlay(base: Stretch[], wakes: Stretch[]): Stretch[] {
  let out = [...base].sort((a, b) => a.start - b.start);
  for (const w of wakes) {
    const next: Stretch[] = [];
    for (const s of out) {
      if (w.end <= s.start || w.start >= s.end || s.phase === 'awake') {
        next.push(s);
        continue;
      }
      if (w.start > s.start) next.push({ ...s, end: w.start });
      next.push({ phase: 'awake', start: Math.max(w.start, s.start), end: Math.min(w.end, s.end) });
      if (w.end < s.end) next.push({ ...s, start: w.end });
    }
    out = next;
  }
  return out;
}

function session(log: Json, zone: LocalZone): SleepSessionRecord {
  const id = log.logId;
  if (typeof id !== 'number' && typeof id !== 'string') throw new RecordError('logId is missing');
  const start = zonedInstant(log.startTime, zone, 'startTime');
  const end = zonedInstant(log.endTime, zone, 'endTime');
  if (end.ms <= start.ms) throw new RecordError('endTime is not after startTime');
  const levels = log.levels === undefined || log.levels === null ? {} : objectAt(log.levels, 'levels');
  const data = stretches(arrayAt(levels.data, 'levels.data'), zone, 'levels.data');
  const short = stretches(arrayAt(levels.shortData, 'levels.shortData'), zone, 'levels.shortData');
  const phases = overlay(data, short);
  const seconds = phaseTotals(phases, 1000);
  const staged = phases.length > 0;
  const minutesAsleep = num(log.minutesAsleep, 'minutesAsleep');
  const asleep = staged ? asleepOf(seconds) : (minutesAsleep ?? 0) * 60;
  return {
    kind: 'sleep_session',
    provider: PROVIDER,
    source: PROVIDER,
    device: null,
    body_worn: true,
    external_id: `sleep:${id}`,
    bedtime_start: iso(start.ms),
    bedtime_end: iso(end.ms),
    total_sleep_seconds: Math.round(asleep),
    deep_sleep_seconds: Math.round(seconds.deep),
    rem_sleep_seconds: Math.round(seconds.rem),
    light_sleep_seconds: Math.round(seconds.light),
    awake_seconds: Math.round(staged ? seconds.awake : (num(log.minutesAwake, 'minutesAwake') ?? 0) * 60),
    sleep_score: null,
    hrv_avg_ms: null,
    resting_hr: null,
    respiratory_rate: null,
    spo2_avg: null,
    phases: phases.map((p) => ({ phase: p.phase, start_date: iso(p.start), end_date: iso(p.end) })),
    metadata: {
      ...zoneMetadata(zone, start),
      ...(end.offset !== start.offset ? { end_utc_offset: end.offset } : {}),
      date_of_sleep: log.dateOfSleep ?? null,
      log_type: log.logType ?? null,
      sleep_type: log.type ?? null,
      is_main_sleep: log.isMainSleep ?? null,
      efficiency: num(log.efficiency, 'efficiency'),
      minutes_asleep: minutesAsleep,
      minutes_to_fall_asleep: num(log.minutesToFallAsleep, 'minutesToFallAsleep'),
      time_in_bed_minutes: num(log.timeInBed, 'timeInBed'),
    },
  };
}
