import ucum from '@lhncbc/ucum-lhc';
import { findQuantityType } from './quantityCatalog.js';

/**
 * Unit conversion through UCUM (@lhncbc/ucum-lhc): no hand-written factors for what UCUM
 * defines. Providers name units their own way; the tables below only translate those names to
 * UCUM codes, and UCUM does the arithmetic. Factors are cached per unit pair, since a million
 * samples share a handful of units.
 */
const utils = ucum.UcumLhcUtils.getInstance();

/** HealthKit unit strings (HKUnit unitString) to UCUM codes. Storage units are HealthKit strings too. */
export const HEALTHKIT_UNIT_TO_UCUM: Readonly<Record<string, string>> = {
  count: '1',
  'count/min': '/min',
  'count/s': '/s',
  '%': '%',
  kcal: 'kcal',
  Cal: 'kcal',
  kJ: 'kJ',
  J: 'J',
  cal: 'cal',
  ms: 'ms',
  s: 's',
  min: 'min',
  hr: 'h',
  d: 'd',
  kg: 'kg',
  g: 'g',
  mg: 'mg',
  mcg: 'ug',
  lb: '[lb_av]',
  oz: '[oz_av]',
  st: '[stone_av]',
  m: 'm',
  cm: 'cm',
  mm: 'mm',
  km: 'km',
  in: '[in_i]',
  ft: '[ft_i]',
  yd: '[yd_i]',
  mi: '[mi_i]',
  degC: 'Cel',
  degF: '[degF]',
  K: 'K',
  mmHg: 'mm[Hg]',
  'mg/dL': 'mg/dL',
  L: 'L',
  mL: 'mL',
  fl_oz_us: '[foz_us]',
  'mL/(kg*min)': 'mL/(kg.min)',
  'm/s': 'm/s',
  'km/hr': 'km/h',
  W: 'W',
  dBASPL: 'dB',
  IU: '[iU]',
  'kg/m^2': 'kg/m2',
  // HealthKit's prefix for micro is "mc" (HKUnit microvolt = mcV); UCUM writes u.
  mcV: 'uV',
  mV: 'mV',
  V: 'V',
  Hz: 'Hz',
};

/** UCUM code of a HealthKit unit string, or the string itself when it already is UCUM. */
export function ucumOf(unit: string): string {
  return HEALTHKIT_UNIT_TO_UCUM[unit] ?? unit;
}

const factorCache = new Map<string, ((v: number) => number) | null>();

/**
 * A converter from one UCUM unit to another, or null when UCUM says they are not commensurable.
 * Linear units get a cached factor; special units (temperatures) go through UCUM every time.
 */
export function converter(fromUcum: string, toUcum: string): ((v: number) => number) | null {
  const key = `${fromUcum}\u0000${toUcum}`;
  const cached = factorCache.get(key);
  if (cached !== undefined) return cached;
  let fn: ((v: number) => number) | null;
  if (fromUcum === toUcum) fn = (v) => v;
  else {
    const one = utils.convertUnitTo(fromUcum, 1, toUcum);
    const two = utils.convertUnitTo(fromUcum, 2, toUcum);
    if (one.status !== 'succeeded' || two.status !== 'succeeded') fn = null;
    else if (Math.abs(two.toVal - 2 * one.toVal) < 1e-9 * Math.max(1, Math.abs(two.toVal))) {
      const f = one.toVal;
      fn = (v) => v * f;
    } else fn = (v) => utils.convertUnitTo(fromUcum, v, toUcum).toVal;
  }
  factorCache.set(key, fn);
  return fn;
}

export class UnitConversionError extends Error {
  override name = 'UnitConversionError';
}

/**
 * Converts a value of a catalog quantity type to its storage unit. `unit` may be a HealthKit unit
 * string or a UCUM code. Throws UnitConversionError for an unknown type or incompatible unit.
 */
export function toStorageUnit(type: string, value: number, unit: string): { value: number; unit: string } {
  const t = findQuantityType(type);
  if (!t) throw new UnitConversionError(`unknown quantity type ${type}`);
  if (unit === t.unit) return { value, unit: t.unit };
  // Dimensionless counts: UCUM annotations such as {steps} are all "1".
  const from = ucumOf(unit).replace(/\{[^}]*\}/g, '') || '1';
  const to = ucumOf(t.unit).replace(/\{[^}]*\}/g, '') || '1';
  const fn = converter(from, to);
  if (!fn) throw new UnitConversionError(`cannot convert ${unit} to ${t.unit} for ${type}`);
  return { value: roundSignificant(fn(value)), unit: t.unit };
}

/** Float noise from unit factors (68.03885550000001) is not information. */
function roundSignificant(v: number): number {
  return Number.isFinite(v) ? Number(v.toPrecision(12)) : v;
}

const storageConverters = new Map<string, ((v: number) => number) | null>();

/**
 * toStorageUnit for many values of one (type, unit) pair: the converter is built once and cached
 * (UCUM lookup and annotation stripping happen once, not per value); same results as
 * toStorageUnit. Null when the unit does not convert; throws UnitConversionError for an unknown type.
 */
export function storageUnitConverter(type: string, unit: string): ((v: number) => number) | null {
  const key = `${type}\u0000${unit}`;
  const cached = storageConverters.get(key);
  if (cached !== undefined) return cached;
  const t = findQuantityType(type);
  if (!t) throw new UnitConversionError(`unknown quantity type ${type}`);
  let fn: ((v: number) => number) | null;
  if (unit === t.unit) fn = (v) => v;
  else {
    const c = converter(ucumOf(unit).replace(/\{[^}]*\}/g, '') || '1', ucumOf(t.unit).replace(/\{[^}]*\}/g, '') || '1');
    fn = c ? (v) => roundSignificant(c(v)) : null;
  }
  storageConverters.set(key, fn);
  return fn;
}
