import type { ParseItem } from '../../../../commands/ingestion/records.js';
import { isObject, RecordError } from '../../shared/recordError.js';
import { readDate } from '../../shared/providerTimes.js';
import { nextDate, zonedInstant, type LocalZone } from '../../shared/zonedLocalTime.js';
import { arrayAt, each, num, objectAt, quantity, TRACKER, zoneMetadata } from './fitbitPayload.js';

/**
 * Nightly values Fitbit computes from the main sleep and files under the date the sleep ends:
 * HRV (`/1/user/-/hrv/date/{start}/{end}.json`: RMSSD, over the night and over deep sleep), SpO2
 * (`/1/user/-/spo2/date/{start}/{end}.json`: average, min and max; a range answers a bare array)
 * and breathing rate (`/1/user/-/br/date/{start}/{end}.json`). Each is a sample over that local day.
 */
type Nightly = { type: string; unit: string; read: (value: Record<string, unknown>) => { value: number | null; extra: Record<string, unknown> }; min: number; max: number };

const NIGHTLY: Readonly<Record<'hrv' | 'spo2' | 'breathing_rate', Nightly & { list: (answer: unknown) => unknown[] }>> = {
  hrv: {
    type: 'hrv_rmssd',
    unit: 'ms',
    min: 1,
    max: 300,
    list: (a) => arrayAt(objectAt(a, 'answer').hrv, 'hrv'),
    read: (v) => ({ value: num(v.dailyRmssd, 'value.dailyRmssd'), extra: { deep_rmssd_ms: num(v.deepRmssd, 'value.deepRmssd') } }),
  },
  spo2: {
    type: 'oxygen_saturation',
    unit: '%',
    min: 50,
    max: 100,
    list: (a) => (Array.isArray(a) ? a : isObject(a) && 'dateTime' in a ? [a] : arrayAt(objectAt(a, 'answer').spo2, 'spo2')),
    read: (v) => ({ value: num(v.avg, 'value.avg'), extra: { min_percent: num(v.min, 'value.min'), max_percent: num(v.max, 'value.max') } }),
  },
  breathing_rate: {
    type: 'respiratory_rate',
    unit: 'count/min',
    min: 4,
    max: 60,
    list: (a) => arrayAt(objectAt(a, 'answer').br, 'br'),
    read: (v) => ({ value: num(v.breathingRate, 'value.breathingRate'), extra: {} }),
  },
};

export function decodeNightly(kind: keyof typeof NIGHTLY, answer: unknown, zone: LocalZone): ParseItem[] {
  const spec = NIGHTLY[kind];
  return spec.list(answer).flatMap((entry, i) =>
    each(`${kind}[${i}]`, entry, () => {
      const e = objectAt(entry, `${kind}[${i}]`);
      const date = readDate(e.dateTime, `${kind}[${i}].dateTime`);
      const { value, extra } = spec.read(isObject(e.value) ? e.value : {});
      // A night without enough data answers the date with no value (or zeros): no sample.
      if (value === null || value === 0) return [];
      if (value < spec.min || value > spec.max) throw new RecordError(`${kind} ${value} is outside ${spec.min}..${spec.max}`);
      const start = zonedInstant(date, zone, 'dateTime');
      const end = zonedInstant(nextDate(date), zone, 'dateTime');
      return [{ record: quantity({ id: `${spec.type}:${date}`, type: spec.type, value, unit: spec.unit, start: start.ms, end: end.ms, worn: TRACKER, metadata: { ...zoneMetadata(zone, start), date, ...extra } }) }];
    }),
  );
}
