import type { NormalizedRecord, Provenance } from '../../../../commands/ingestion/records.js';
import { isObject, RecordError, type Json } from '../../shared/recordError.js';
import { fitbitQuantity, num, requireNum, type ElementDecoder } from './fitbitRecords.js';
import { dateOf, usDateTime, type TakeoutClock } from './takeoutClock.js';
import type { FileKind } from './takeoutLayout.js';

/**
 * The time series files of the JSON layout: arrays of `{"dateTime": "MM/DD/YY HH:MM:SS", "value": …}`.
 *
 * | file | value | record |
 * |---|---|---|
 * | `heart_rate-*.json` | `{bpm, confidence}`, dateTime in UTC | `heart_rate` at the instant |
 * | `steps-*.json` | steps of the minute (a string) | `step_count` over the minute, zero minutes left out |
 * | `distance-*.json` | centimetres of the minute | `distance` over the minute, zero left out |
 * | `calories-*.json` | kilocalories of the minute (basal included) | `total_energy_burned` over the minute |
 * | `resting_heart_rate-*.json` | `{date, value, error}` per local day | `resting_heart_rate` over the day; 0 is "no value" |
 * | `demographic_vo2_max-*.json` | `{demographicVO2Max, filteredDemographicVO2Max, …}` per day | `vo2_max` over the day (the filtered value) |
 * | `height-*.json` | millimetres | `height` at local midnight |
 */

const MINUTE = 60_000;

type Ctx = { p: Provenance; clock: TakeoutClock };

function perMinute(type: string, unit: string, scale: number, { p, clock }: Ctx): ElementDecoder {
  return (e) => {
    const wall = usDateTime(e.dateTime, 'dateTime');
    const value = requireNum(e.value, 'value');
    if (value < 0) throw new RecordError(`value ${value} is negative`);
    if (value === 0) return [];
    const start = clock.local(wall);
    return [fitbitQuantity(p, { id: `${type}:${new Date(start).toISOString()}`, type, value: value * scale, unit, start, end: start + MINUTE, metadata: clock.metadata(start) })];
  };
}

function heartRate({ p, clock }: Ctx): ElementDecoder {
  return (e) => {
    const at = clock.utc(usDateTime(e.dateTime, 'dateTime'));
    const v = isObject(e.value) ? e.value : null;
    if (!v) throw new RecordError('value is not an object {bpm, confidence}');
    const bpm = requireNum(v.bpm, 'value.bpm');
    if (bpm <= 0) throw new RecordError(`value.bpm ${bpm} is not a heart rate`);
    return [fitbitQuantity(p, { id: `heart_rate:${new Date(at).toISOString()}`, type: 'heart_rate', value: bpm, unit: 'count/min', start: at, end: at, metadata: { ...clock.metadata(at), confidence: num(v.confidence, 'value.confidence') } })];
  };
}

function daily(type: string, unit: string, read: (e: Json) => { value: number | null; extra: Record<string, unknown> }, { p, clock }: Ctx): ElementDecoder {
  return (e) => {
    const date = dateOf(usDateTime(e.dateTime, 'dateTime'));
    const { value, extra } = read(e);
    // Days Fitbit could not compute are written as 0 (333 of 365 in one real export): no value, not an error.
    if (value === null || value === 0) return [];
    if (value < 0) throw new RecordError(`value ${value} is negative`);
    const { start, end } = clock.day(date);
    return [fitbitQuantity(p, { id: `${type}:${date}`, type, value, unit, start, end, metadata: { ...clock.metadata(start), date, ...extra } })];
  };
}

const valueObject = (e: Json) => (isObject(e.value) ? e.value : {});

export function seriesDecoder(kind: FileKind, ctx: Ctx): ElementDecoder | null {
  switch (kind) {
    case 'heart_rate':
      return heartRate(ctx);
    case 'steps':
      return perMinute('step_count', 'count', 1, ctx);
    case 'distance':
      return perMinute('distance', 'm', 0.01, ctx);
    case 'calories':
      return perMinute('total_energy_burned', 'kcal', 1, ctx);
    case 'resting_heart_rate':
      return daily('resting_heart_rate', 'count/min', (e) => ({ value: num(valueObject(e).value, 'value.value'), extra: { error: num(valueObject(e).error, 'value.error') } }), ctx);
    case 'demographic_vo2_max':
      return daily(
        'vo2_max',
        'mL/(kg*min)',
        (e) => {
          const v = valueObject(e);
          const filtered = num(v.filteredDemographicVO2Max, 'value.filteredDemographicVO2Max');
          return { value: filtered ?? num(v.demographicVO2Max, 'value.demographicVO2Max'), extra: { demographic_vo2_max: num(v.demographicVO2Max, 'value.demographicVO2Max'), estimate: 'demographic' } };
        },
        ctx,
      );
    case 'height':
      return (e) => {
        const date = dateOf(usDateTime(e.dateTime, 'dateTime'));
        const mm = requireNum(e.value, 'value');
        if (mm <= 0) throw new RecordError(`value ${mm} is not a height in millimetres`);
        const { start } = ctx.clock.day(date);
        const body = { ...ctx.p, body_worn: false };
        return [fitbitQuantity(body, { id: `height:${date}`, type: 'height', value: mm / 1000, unit: 'm', start, end: start, metadata: { ...ctx.clock.metadata(start), date }, manual: true })] as NormalizedRecord[];
      };
    default:
      return null;
  }
}

/** Heights the export states (metres by date), for reading weight logs' units. */
export function heightOf(e: Json): number | null {
  const mm = num(e.value, 'value');
  return mm !== null && mm > 0 ? mm / 1000 : null;
}
