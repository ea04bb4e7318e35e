import ucum from '@lhncbc/ucum-lhc';
import { boundedCache } from '../shared/boundedCache.js';
import { findQuantityType } from './quantityCatalog.js';

/**
 * Unit conversion through UCUM (@lhncbc/ucum-lhc): no hand-written factors for what UCUM
 * defines. Providers name units their own way; the tables below only translate those names to
 * UCUM codes, and UCUM does the arithmetic. A converter is resolved by UCUM once per unit pair and
 * reused, since a million samples share a handful of units. Unit strings come from uploads, so the
 * caches of converters are bounded (src/shared/boundedCache.ts): a stranger sending a million
 * distinct units evicts old pairs, which are resolved again when next seen.
 */
const utils = ucum.UcumLhcUtils.getInstance();

/** A unit as UCUM parsed it (ucum-lhc's Unit): converts a value of another unit into this one. */
type UcumUnit = { convertFrom(value: number, from: UcumUnit): number };
/** convertUnitTo's answer on success also carries both parsed units (ucum-lhc documents them). */
type Resolved = { status: string; toVal: number; fromUnit?: UcumUnit; toUnit?: UcumUnit };

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
  // The Health app's export.xml writes VO2 max's unit with a middle dot (U+00B7).
  'mL/min·kg': 'mL/(min.kg)',
  // Physical effort (iOS 17): kilocalories per hour per kilogram, written with a middle dot too.
  'kcal/hr·kg': 'kcal/(h.kg)',
  'L/min': 'L/min',
  mcS: 'uS',
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

const converters = boundedCache<((v: number) => number) | null>();

/**
 * A converter from one UCUM unit to another, or null when UCUM says they are not commensurable.
 * One call into UCUM per pair (cached): linear units become a factor; special units
 * (temperatures) keep the two units UCUM parsed and convert between them without parsing again.
 */
export function converter(fromUcum: string, toUcum: string): ((v: number) => number) | null {
  return converters.get(`${fromUcum}\u0000${toUcum}`, () => resolveConverter(fromUcum, toUcum));
}

function resolveConverter(fromUcum: string, toUcum: string): ((v: number) => number) | null {
  if (fromUcum === toUcum) return (v) => v;
  const r = utils.convertUnitTo(fromUcum, 1, toUcum) as Resolved;
  if (r.status !== 'succeeded' || !r.fromUnit || !r.toUnit) return null;
  const from = r.fromUnit;
  const to = r.toUnit;
  const f = r.toVal;
  const two = to.convertFrom(2, from);
  if (Math.abs(two - 2 * f) < 1e-9 * Math.max(1, Math.abs(two))) return (v) => v * f;
  return (v) => to.convertFrom(v, from);
}

type MolarUcum = {
  convertUnitTo(from: string, v: number, to: string, options: { molecularWeight: number }): Resolved;
  detectConversionType(from: UcumUnit, to: UcumUnit): string;
};
/** Glucose's molar mass in g/mol: blood glucose in mmol/L ↔ mg/dL. */
export const GLUCOSE_MOLAR_MASS = 180.156;

const molarConverters = boundedCache<((v: number) => number) | null>();

/**
 * A converter between an amount of substance and a mass (blood glucose mmol/L ↔ mg/dL) given the
 * substance's molar mass in g/mol, or null when UCUM cannot convert. Like converter: one call into
 * UCUM per (from, to, molar mass), then a factor (UCUM's mole↔mass conversion is proportional).
 * Units that need no molar mass get converter's converter.
 */
export function molarConverter(fromUcum: string, toUcum: string, molecularWeight: number): ((v: number) => number) | null {
  return molarConverters.get(`${fromUcum}\u0000${toUcum}\u0000${molecularWeight}`, () => {
    const u = utils as unknown as MolarUcum;
    const r = u.convertUnitTo(fromUcum, 1, toUcum, { molecularWeight });
    if (r.status !== 'succeeded' || !r.fromUnit || !r.toUnit) return null;
    if (u.detectConversionType(r.fromUnit, r.toUnit) !== 'mol|mass') return converter(fromUcum, toUcum);
    const f = r.toVal;
    return (v) => v * f;
  });
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

const storageConverters = boundedCache<((v: number) => number) | null>();
const identity = (v: number) => v;

/**
 * toStorageUnit for many values of one (type, unit) pair: the converter is built once and cached
 * (UCUM lookup and annotation stripping happen once, not per value); same results as
 * toStorageUnit. Null when the unit does not convert; throws UnitConversionError for an unknown type.
 */
export function storageUnitConverter(type: string, unit: string): ((v: number) => number) | null {
  const t = findQuantityType(type);
  if (!t) throw new UnitConversionError(`unknown quantity type ${type}`);
  if (unit === t.unit) return identity;
  return storageConverters.get(`${type}\u0000${unit}`, () => {
    const c = converter(ucumOf(unit).replace(/\{[^}]*\}/g, '') || '1', ucumOf(t.unit).replace(/\{[^}]*\}/g, '') || '1');
    return c ? (v: number) => roundSignificant(c(v)) : null;
  });
}
