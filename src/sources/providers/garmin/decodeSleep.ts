import type { ParseItem, SleepPhase, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { epochSeconds, isObject, iso, mean, offsetMap, optionalNumber, optionalString, requiredNumber, summaryMetadata, SummaryError, zoneMetadata, zoneOffset, type Summary } from './fields.js';
import { record, type DecodeContext } from './decodeContext.js';
import { provenance } from './garminRecords.js';
import { MANUAL_SLEEP_VALIDATIONS, SLEEP_LEVELS, TENTATIVE_SLEEP_VALIDATIONS } from './vocabulary.js';

/**
 * `sleeps`: one summary per night, keyed by summaryId (Garmin re-sends a night, same id, once its
 * tentative analysis is final). → a sleep session: stage totals from the duration fields, phases
 * from `sleepLevelsMap`, the night's SpO2 and breathing rate as the means of their maps, the
 * overall sleep score. The session ends at the later of start + duration and the last phase
 * (Garmin's duration counts the time asleep only on some devices).
 */
export function decodeSleep(s: Summary, ctx: DecodeContext): ParseItem[] {
  const id = optionalString(s, 'summaryId');
  if (id === null) throw new SummaryError('summaryId is missing');
  const start = epochSeconds(s, 'startTimeInSeconds');
  const duration = requiredNumber(s, 'durationInSeconds');
  if (duration <= 0 || duration > 24 * 3600) throw new SummaryError(`durationInSeconds ${duration} is not a night's length`);
  const zone = zoneOffset(s);
  const validation = optionalString(s, 'validation');

  const phases: (SleepPhase & { t: number })[] = [];
  let end = start + duration;
  const levels = s.sleepLevelsMap;
  if (levels !== undefined && levels !== null) {
    if (!isObject(levels)) throw new SummaryError('sleepLevelsMap is not an object');
    for (const [level, intervals] of Object.entries(levels)) {
      const phase = SLEEP_LEVELS[level];
      if (!phase) throw new SummaryError(`sleepLevelsMap has an unknown level ${JSON.stringify(level)}`);
      if (!Array.isArray(intervals)) throw new SummaryError(`sleepLevelsMap.${level} is not a list`);
      intervals.forEach((iv: unknown, i: number) => {
        if (!isObject(iv)) throw new SummaryError(`sleepLevelsMap.${level}[${i}] is not an object`);
        const a = epochSeconds(iv, 'startTimeInSeconds');
        const b = epochSeconds(iv, 'endTimeInSeconds');
        if (b <= a) throw new SummaryError(`sleepLevelsMap.${level}[${i}] ends before it starts`);
        if (a < start || b > start + 24 * 3600) throw new SummaryError(`sleepLevelsMap.${level}[${i}] is outside the night`);
        end = Math.max(end, b);
        phases.push({ phase, start_date: iso(a), end_date: iso(b), t: a });
      });
    }
  }
  phases.sort((x, y) => x.t - y.t);

  const seconds = (field: string) => {
    const v = optionalNumber(s, field);
    if (v !== null && (v < 0 || v > 24 * 3600)) throw new SummaryError(`${field} ${v} is not a duration within a day`);
    return v ?? 0;
  };
  const deep = seconds('deepSleepDurationInSeconds');
  const light = seconds('lightSleepDurationInSeconds');
  const rem = seconds('remSleepInSeconds');
  const awake = seconds('awakeDurationInSeconds');
  const spo2 = offsetMap(s, 'timeOffsetSleepSpo2').filter((e) => e.value >= 50 && e.value <= 100);
  const breaths = offsetMap(s, 'timeOffsetSleepRespiration').filter((e) => e.value > 0 && e.value < 60);
  const score = isObject(s.overallSleepScore) ? optionalNumber(s.overallSleepScore, 'value') : null;

  const session: SleepSessionRecord = {
    kind: 'sleep_session',
    ...provenance(ctx.provider, validation === null || !MANUAL_SLEEP_VALIDATIONS.has(validation)),
    external_id: `sleeps:${id}`,
    bedtime_start: iso(start),
    bedtime_end: iso(end),
    // Without stage totals (a manual entry), the night counts as time asleep as a whole.
    total_sleep_seconds: deep + light + rem > 0 ? deep + light + rem : Math.max(0, duration - awake),
    deep_sleep_seconds: deep,
    rem_sleep_seconds: rem,
    light_sleep_seconds: light,
    awake_seconds: awake,
    sleep_score: score,
    hrv_avg_ms: null,
    resting_hr: null,
    respiratory_rate: mean(breaths.map((e) => e.value)),
    spo2_avg: mean(spo2.map((e) => e.value)),
    phases: phases.map(({ t: _t, ...ph }) => ph),
    metadata: {
      ...summaryMetadata(s, ['sleepLevelsMap', 'timeOffsetSleepSpo2', 'timeOffsetSleepRespiration']),
      ...zoneMetadata(zone),
      // A tentative night is still being analysed: Garmin sends the final one under the same id.
      ...(validation !== null && TENTATIVE_SLEEP_VALIDATIONS.has(validation) ? { in_progress: true } : {}),
    },
  };
  return [record(session)];
}
