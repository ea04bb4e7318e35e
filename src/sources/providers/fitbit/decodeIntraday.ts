import type { ParseItem } from '../../../../commands/ingestion/records.js';
import { isObject, RecordError } from '../../shared/recordError.js';
import { readDate } from '../../shared/providerTimes.js';
import { nextDate, zonedInstant, type LocalZone } from '../../shared/zonedLocalTime.js';
import { arrayAt, each, num, objectAt, quantity, requireNum, TRACKER, zoneMetadata } from './fitbitPayload.js';

/**
 * Intraday time series of one local day (`/1/user/-/activities/{heart|steps}/date/{date}/1d/1min.json`):
 * the day's summary under `activities-<resource>` and the minutes under `activities-<resource>-intraday`
 * (`dataset` of `{time: "HH:MM:SS", value}`, `datasetInterval` in minutes).
 */
type Resource = 'heart' | 'steps';

function daySummary(answer: unknown, resource: Resource) {
  const a = objectAt(answer, 'answer');
  const days = arrayAt(a[`activities-${resource}`], `activities-${resource}`);
  const day = days[0];
  if (!isObject(day)) throw new RecordError(`activities-${resource} names no day`);
  const date = readDate(day.dateTime, `activities-${resource}[0].dateTime`);
  const intraday = a[`activities-${resource}-intraday`];
  const dataset = isObject(intraday) ? arrayAt(intraday.dataset, 'dataset') : [];
  const interval = isObject(intraday) && typeof intraday.datasetInterval === 'number' && intraday.datasetInterval > 0 ? intraday.datasetInterval : 1;
  return { day, date, dataset, intervalMs: interval * 60_000 };
}

function minuteOf(date: string, p: unknown, zone: LocalZone, field: string) {
  const point = objectAt(p, field);
  if (typeof point.time !== 'string' || !/^\d{2}:\d{2}(:\d{2})?$/.test(point.time)) throw new RecordError(`${field}.time is not HH:MM:SS`);
  return { point, at: zonedInstant(`${date}T${point.time}`, zone, `${field}.time`), time: point.time.length === 5 ? `${point.time}:00` : point.time };
}

export function decodeHeartIntraday(answer: unknown, zone: LocalZone): ParseItem[] {
  const { day, date, dataset, intervalMs } = daySummary(answer, 'heart');
  const out: ParseItem[] = [];
  const value = isObject(day.value) ? day.value : {};
  const resting = num(value.restingHeartRate, 'restingHeartRate');
  if (resting !== null && resting > 0) {
    const start = zonedInstant(date, zone, 'dateTime');
    const end = zonedInstant(nextDate(date), zone, 'dateTime');
    out.push({ record: quantity({ id: `resting_heart_rate:${date}`, type: 'resting_heart_rate', value: resting, unit: 'count/min', start: start.ms, end: end.ms, worn: TRACKER, metadata: { ...zoneMetadata(zone, start), date } }) });
  }
  dataset.forEach((p, i) => {
    out.push(
      ...each(`dataset[${i}]`, p, () => {
        const { point, at, time } = minuteOf(date, p, zone, `dataset[${i}]`);
        const bpm = requireNum(point.value, `dataset[${i}].value`);
        if (bpm < 20 || bpm > 250) throw new RecordError(`dataset[${i}].value ${bpm} is not a plausible heart rate`);
        return [{ record: quantity({ id: `heart_rate:${date}T${time}`, type: 'heart_rate', value: bpm, unit: 'count/min', start: at.ms, end: at.ms + intervalMs, worn: TRACKER, metadata: zoneMetadata(zone, at) }) }];
      }),
    );
  });
  return out;
}

/** Minutes without a step are not samples (a day is 1,440 minutes, most of them still). */
export function decodeStepsIntraday(answer: unknown, zone: LocalZone): ParseItem[] {
  const { date, dataset, intervalMs } = daySummary(answer, 'steps');
  const out: ParseItem[] = [];
  dataset.forEach((p, i) => {
    out.push(
      ...each(`dataset[${i}]`, p, () => {
        const { point, at, time } = minuteOf(date, p, zone, `dataset[${i}]`);
        const steps = requireNum(point.value, `dataset[${i}].value`);
        if (steps < 0 || steps > 300 * (intervalMs / 60_000)) throw new RecordError(`dataset[${i}].value ${steps} is not a plausible step count for its interval`);
        if (steps === 0) return [];
        return [{ record: quantity({ id: `step_count:${date}T${time}`, type: 'step_count', value: steps, unit: 'count', start: at.ms, end: at.ms + intervalMs, worn: TRACKER, metadata: zoneMetadata(zone, at) }) }];
      }),
    );
  });
  return out;
}
