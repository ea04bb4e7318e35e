import type { Metadata, ParseItem } from '../../../../commands/ingestion/records.js';
import { RecordError, type Json } from '../../shared/recordError.js';
import { readDate } from '../../shared/providerTimes.js';
import { zonedInstant, type LocalZone, type ZonedInstant } from '../../shared/zonedLocalTime.js';
import { arrayAt, each, num, objectAt, quantity, requireNum, type Worn, zoneMetadata } from './fitbitPayload.js';

/**
 * Body logs (`/1/user/-/body/log/weight/date/{start}/{end}.json`, `…/body/log/fat/…`): each log
 * has a local `date` and `time` and a `logId`; weight is kilograms and BMI kg/m² (metric: no
 * locale asked), fat a percentage. A log from an Aria scale names it in `source`; `API` and
 * `Web` logs were typed in by someone.
 */
function scaleOf(log: Json): { worn: Worn; manual: boolean } {
  const source = typeof log.source === 'string' ? log.source : null;
  const scale = source !== null && /^aria/i.test(source);
  return { worn: { device: scale ? source : null, body_worn: false }, manual: !scale };
}

function when(log: Json, zone: LocalZone, field: string) {
  const date = readDate(log.date, `${field}.date`);
  const time = typeof log.time === 'string' ? log.time : '00:00:00';
  return zonedInstant(`${date}T${time}`, zone, `${field}.time`);
}

/** Each log of the answer's `key` list, decoded alone with its id, time and scale. */
function eachLog(answer: unknown, key: 'weight' | 'fat', zone: LocalZone, decode: (log: Json, c: { id: string | number; at: ZonedInstant; worn: Worn; manual: boolean; metadata: Metadata }) => ParseItem[]): ParseItem[] {
  const logs = arrayAt(objectAt(answer, 'answer')[key], key);
  return logs.flatMap((x, i) =>
    each(`${key}[${i}]`, x, () => {
      const log = objectAt(x, `${key}[${i}]`);
      const id = log.logId;
      if (typeof id !== 'number' && typeof id !== 'string') throw new RecordError('logId is missing');
      const at = when(log, zone, `${key}[${i}]`);
      return decode(log, { id, at, ...scaleOf(log), metadata: { ...zoneMetadata(zone, at), log_id: id, log_source: log.source ?? null } });
    }),
  );
}

export function decodeWeight(answer: unknown, zone: LocalZone): ParseItem[] {
  return eachLog(answer, 'weight', zone, (log, { id, at, worn, manual, metadata }) => {
    const kg = requireNum(log.weight, 'weight');
    if (kg <= 0 || kg > 650) throw new RecordError(`weight ${kg} kg is not plausible`);
    const out: ParseItem[] = [{ record: quantity({ id: `body_mass:${id}`, type: 'body_mass', value: kg, unit: 'kg', start: at.ms, end: at.ms, worn, manual, metadata }) }];
    const bmi = num(log.bmi, 'bmi');
    if (bmi !== null && bmi > 0) out.push({ record: quantity({ id: `body_mass_index:${id}`, type: 'body_mass_index', value: bmi, unit: 'count', start: at.ms, end: at.ms, worn, manual, metadata }) });
    return out;
  });
}

export function decodeBodyFat(answer: unknown, zone: LocalZone): ParseItem[] {
  return eachLog(answer, 'fat', zone, (log, { id, at, worn, manual, metadata }) => {
    const fat = requireNum(log.fat, 'fat');
    if (fat <= 0 || fat >= 100) throw new RecordError(`fat ${fat} % is not plausible`);
    return [{ record: quantity({ id: `body_fat_percentage:${id}`, type: 'body_fat_percentage', value: fat, unit: '%', start: at.ms, end: at.ms, worn, manual, metadata }) }];
  });
}
