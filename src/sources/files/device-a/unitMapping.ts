import { findQuantityType } from '../../../catalog/quantityCatalog.js';
import { converter, ucumOf } from '../../../catalog/units.js';
import { isObject, type Json } from '../../shared/recordError.js';
import { fail, finite } from './lineFields.js';
import type { Upload } from './upload.js';

/** HealthKit's quantities as sent (`{value, unit}` or a number with its unit beside it) brought to storage units through UCUM. */

/** An HKQuantity as sent: `{value, unit}`, or a number with `<name>_unit` beside it (Apple's export form). */
export function quantityField(o: Json, name: string, defaultUnit: string | null): { value: number; unit: string } | null {
  const raw = o[name];
  if (raw === undefined || raw === null) return null;
  let value: unknown;
  let unit: unknown;
  if (isObject(raw)) {
    value = raw.value;
    unit = raw.unit ?? defaultUnit;
  } else {
    value = raw;
    unit = o[`${name}_unit`] ?? defaultUnit;
  }
  if (!finite(value)) fail(`${name} is not a finite number`);
  if (typeof unit !== 'string' || unit === '') fail(`${name} has no unit`);
  return { value, unit };
}

/** A value of a catalog type from a quantity field, converted to the type's storage unit. */
export function catalogValue(up: Upload, o: Json, name: string, type: string, defaultUnit: string | null): number | null {
  const q = quantityField(o, name, defaultUnit);
  if (!q) return null;
  return up.convert(findQuantityType(type)!, q.value, q.unit);
}

/** A value converted through UCUM to a unit that is not a catalog type's (seconds, hertz, microvolts). */
export function ucumValue(value: number, unit: string, toUcum: string, what: string): number {
  const fn = converter(ucumOf(unit), toUcum);
  if (!fn) fail(`cannot convert ${what} unit "${unit}" to ${toUcum}`);
  return fn(value);
}

type Statistic = { average?: number; minimum?: number; maximum?: number; sum?: number; unit: string };

/** HKWorkout `statistics` (allStatistics): identifier → {average, minimum, maximum, sum, unit}. */
export function statisticOf(o: Json, identifier: string): Statistic | null {
  const all = o.statistics;
  if (all === undefined || all === null) return null;
  if (!isObject(all)) fail('statistics is not an object');
  const s = all[identifier];
  if (s === undefined || s === null) return null;
  if (!isObject(s) || typeof s.unit !== 'string' || s.unit === '') fail(`statistics.${identifier} needs a unit`);
  for (const k of ['average', 'minimum', 'maximum', 'sum'] as const) {
    if (s[k] !== undefined && s[k] !== null && !finite(s[k])) fail(`statistics.${identifier}.${k} is not a finite number`);
  }
  return s as Statistic;
}

export function statValue(up: Upload, o: Json, identifier: string, field: 'average' | 'maximum' | 'sum', type: string): number | null {
  const s = statisticOf(o, identifier);
  const v = s?.[field];
  if (!s || !finite(v)) return null;
  return up.convert(findQuantityType(type)!, v, s.unit);
}
