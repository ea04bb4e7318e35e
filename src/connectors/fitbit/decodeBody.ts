import type { ParseItem } from '../../../commands/ingestion/records.js';
import { RecordError, type Json } from '../devices/deviceB/recordError.js';
import { readDate } from '../shared/providerTimes.js';
import { zonedInstant, type LocalZone } from '../shared/zonedLocalTime.js';
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

export function decodeWeight(answer: unknown, zone: LocalZone): ParseItem[] {
  const logs = arrayAt(objectAt(answer, 'answer').weight, 'weight');
  return logs.flatMap((x, i) =>
    each(`weight[${i}]`, x, () => {
      const log = objectAt(x, `weight[${i}]`);
      const id = log.logId;
      if (typeof id !== 'number' && typeof id !== 'string') throw new RecordError('logId is missing');
      const at = when(log, zone, `weight[${i}]`);
      const kg = requireNum(log.weight, `weight[${i}].weight`);
      if (kg <= 0 || kg > 650) throw new RecordError(`weight ${kg} kg is not plausible`);
      const { worn, manual } = scaleOf(log);
      const metadata = { ...zoneMetadata(zone, at), log_id: id, log_source: log.source ?? null };
      const out: ParseItem[] = [{ record: quantity({ id: `body_mass:${id}`, type: 'body_mass', value: kg, unit: 'kg', start: at.ms, end: at.ms, worn, manual, metadata }) }];
      const bmi = num(log.bmi, `weight[${i}].bmi`);
      if (bmi !== null && bmi > 0) out.push({ record: quantity({ id: `body_mass_index:${id}`, type: 'body_mass_index', value: bmi, unit: 'count', start: at.ms, end: at.ms, worn, manual, metadata }) });
      return out;
    }),
  );
}

export function decodeBodyFat(answer: unknown, zone: LocalZone): ParseItem[] {
  const logs = arrayAt(objectAt(answer, 'answer').fat, 'fat');
  return logs.flatMap((x, i) =>
    each(`fat[${i}]`, x, () => {
      const log = objectAt(x, `fat[${i}]`);
      const id = log.logId;
      if (typeof id !== 'number' && typeof id !== 'string') throw new RecordError('logId is missing');
      const at = when(log, zone, `fat[${i}]`);
      const fat = requireNum(log.fat, `fat[${i}].fat`);
      if (fat <= 0 || fat >= 100) throw new RecordError(`fat ${fat} % is not plausible`);
      const { worn, manual } = scaleOf(log);
      return [{ record: quantity({ id: `body_fat_percentage:${id}`, type: 'body_fat_percentage', value: fat, unit: '%', start: at.ms, end: at.ms, worn, manual, metadata: { ...zoneMetadata(zone, at), log_id: id, log_source: log.source ?? null } }) }];
    }),
  );
}
