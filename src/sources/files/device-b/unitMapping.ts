import { findQuantityType } from '../../../catalog/quantityCatalog.js';
import { converter, GLUCOSE_MOLAR_MASS, molarConverter, toStorageUnit, ucumOf } from '../../../catalog/units.js';
import { isObject, RecordError } from '../../shared/recordError.js';

/**
 * Health Connect's unit classes (Mass, Energy, Length, …) and the validation ranges of its record
 * classes. Properties arrive as objects named after the Kotlin class's own getters
 * (`{"inKilograms": 70.2}`); this file only names the UCUM code of each getter and leaves the
 * arithmetic to UCUM (src/catalog/units.ts), so a new unit is one table row, not a formula.
 */

// ---------------------------------------------------------------------------------------------
// Unit classes: Kotlin property → UCUM code. The first listed is read first when several are sent.

export type UnitClass = 'mass' | 'energy' | 'length' | 'temperature' | 'volume' | 'pressure' | 'bloodGlucose' | 'power' | 'percentage';

export const UNIT_PROPERTIES: Readonly<Record<UnitClass, readonly (readonly [property: string, ucum: string])[]>> = {
  mass: [
    ['inKilograms', 'kg'],
    ['inGrams', 'g'],
    ['inMilligrams', 'mg'],
    ['inMicrograms', 'ug'],
    ['inPounds', '[lb_av]'],
    ['inOunces', '[oz_av]'],
  ],
  energy: [
    ['inKilocalories', 'kcal'],
    ['inCalories', 'cal'],
    ['inKilojoules', 'kJ'],
    ['inJoules', 'J'],
  ],
  length: [
    ['inMeters', 'm'],
    ['inKilometers', 'km'],
    ['inMiles', '[mi_i]'],
    ['inFeet', '[ft_i]'],
    ['inInches', '[in_i]'],
  ],
  temperature: [
    ['inCelsius', 'Cel'],
    ['inFahrenheit', '[degF]'],
  ],
  volume: [
    ['inMilliliters', 'mL'],
    ['inLiters', 'L'],
    ['inFluidOuncesUs', '[foz_us]'],
  ],
  pressure: [['inMillimetersOfMercury', 'mm[Hg]']],
  bloodGlucose: [
    ['inMilligramsPerDeciliter', 'mg/dL'],
    ['inMillimolesPerLiter', 'mmol/L'],
  ],
  power: [
    ['inKilocaloriesPerDay', 'kcal/d'],
    ['inWatts', 'W'],
  ],
  percentage: [['value', '%']],
};

const CLASS_NAME: Readonly<Record<UnitClass, string>> = {
  mass: 'Mass',
  energy: 'Energy',
  length: 'Length',
  temperature: 'Temperature',
  volume: 'Volume',
  pressure: 'Pressure',
  bloodGlucose: 'BloodGlucose',
  power: 'Power',
  percentage: 'Percentage',
};

export type Measured = { value: number; ucum: string };

export function readUnit(obj: unknown, field: string, cls: UnitClass): Measured {
  if (obj === undefined || obj === null) throw new RecordError(`${field} is missing`);
  if (!isObject(obj)) throw new RecordError(`${field} must be a ${CLASS_NAME[cls]} object such as {"${UNIT_PROPERTIES[cls][0]![0]}": …}`);
  for (const [prop, code] of UNIT_PROPERTIES[cls]) {
    if (!(prop in obj)) continue;
    const v = obj[prop];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new RecordError(`${field}.${prop} is not a finite number`);
    return { value: v, ucum: code };
  }
  throw new RecordError(`${field} has no ${CLASS_NAME[cls]} unit property (expected one of ${UNIT_PROPERTIES[cls].map(([p]) => p).join(', ')})`);
}

export function readNumber(v: unknown, field: string): number {
  if (v === undefined || v === null) throw new RecordError(`${field} is missing`);
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new RecordError(`${field} is not a finite number`);
  return v;
}

const stripAnnotations = (u: string) => u.replace(/\{[^}]*\}/g, '') || '1';

/** Storage unit of a catalog type and its UCUM code, looked up once per type (a million samples share a handful). */
const storageCache = new Map<string, { unit: string; ucum: string } | null>();
function storageOf(type: string): { unit: string; ucum: string } | null {
  let s = storageCache.get(type);
  if (s === undefined) {
    const t = findQuantityType(type);
    s = t ? { unit: t.unit, ucum: stripAnnotations(ucumOf(t.unit)) } : null;
    storageCache.set(type, s);
  }
  return s;
}

export function roundSignificant(v: number): number {
  return Number(v.toPrecision(12));
}

/**
 * Amounts of substance (blood glucose in mmol/L) and mass concentrations (mg/dL) are not
 * commensurable without a molar mass: UCUM converts them given glucose's. Everything else goes
 * through units.ts. Null when UCUM cannot convert.
 */
function molarConvert(value: number, fromUcum: string, toUcum: string): number | null {
  if (fromUcum.includes('mol') === toUcum.includes('mol')) return null;
  return molarConverter(fromUcum, toUcum, GLUCOSE_MOLAR_MASS)?.(value) ?? null;
}

/** A value of a catalog type in its storage unit, with what arrived when the unit differed. */
export function toStorage(type: string, m: Measured): { value: number; unit: string; original: { value: number; unit: string } | null } {
  const t = storageOf(type);
  if (!t) throw new RecordError(`quantity type ${type} is not in the catalog`);
  const to = t.ucum;
  const from = m.ucum.includes('{') ? stripAnnotations(m.ucum) : m.ucum;
  if (from === to) return { value: m.value, unit: t.unit, original: null };
  const molar = molarConvert(m.value, from, to);
  if (molar !== null) return { value: roundSignificant(molar), unit: t.unit, original: { value: m.value, unit: m.ucum } };
  try {
    const c = toStorageUnit(type, m.value, m.ucum);
    return { ...c, original: { value: m.value, unit: m.ucum } };
  } catch (err) {
    throw new RecordError(err instanceof Error ? err.message : String(err));
  }
}

/** Converts to a fixed UCUM unit (nutrients, route lengths); throws when UCUM says they are not commensurable. */
export function convertTo(m: Measured, toUcum: string, field: string): number {
  if (m.ucum === toUcum) return m.value;
  const fn = converter(m.ucum, toUcum);
  if (!fn) throw new RecordError(`${field}: cannot convert ${m.ucum} to ${toUcum}`);
  return roundSignificant(fn(m.value));
}

// ---------------------------------------------------------------------------------------------
// Bounds: Health Connect's own validation ranges of each record class, in the unit stated.

export type Bounds = { min: number; max: number; ucum: string };

/** Bounds in a storage unit, per bounds object and unit. */
const boundsCache = new WeakMap<Bounds, Map<string, { min: number; max: number } | null>>();
function boundsIn(b: Bounds, unit: string): { min: number; max: number } | null {
  let byUnit = boundsCache.get(b);
  if (!byUnit) boundsCache.set(b, (byUnit = new Map()));
  let r = byUnit.get(unit);
  if (r === undefined) {
    const to = stripAnnotations(ucumOf(unit));
    const fn = converter(b.ucum, to);
    const min = fn ? fn(b.min) : molarConvert(b.min, b.ucum, to);
    const max = fn ? fn(b.max) : molarConvert(b.max, b.ucum, to);
    r = min === null || max === null ? null : { min, max };
    byUnit.set(unit, r);
  }
  return r;
}

export function checkBounds(type: string, value: number, unit: string, b: Bounds | undefined, field: string) {
  if (!b) return;
  const inUnit = boundsIn(b, unit);
  if (!inUnit) throw new RecordError(`cannot check ${field} in ${unit} against bounds in ${b.ucum}`);
  const { min, max } = inUnit;
  const eps = 1e-9 * Math.max(1, Math.abs(max));
  if (value < min - eps || value > max + eps) {
    throw new RecordError(`${field} ${value} ${unit} is outside ${roundSignificant(min)}..${roundSignificant(max)} ${unit} for ${type}`);
  }
}
