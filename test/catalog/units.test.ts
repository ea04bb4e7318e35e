import ucum from '@lhncbc/ucum-lhc';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { converter, molarConverter, storageUnitConverter, toStorageUnit } from '../../src/catalog/units.js';

/** ucum-lhc's getInstance makes a new object each time, so the spy goes on the shared prototype. */
type UcumProto = { convertUnitTo(from: string, v: number, to: string, options?: { molecularWeight?: number }): { status: string; toVal: number } };
const proto = (ucum.UcumLhcUtils as unknown as { prototype: UcumProto }).prototype;
const direct = (from: string, v: number, to: string, options?: { molecularWeight?: number }) => proto.convertUnitTo.call(ucum.UcumLhcUtils.getInstance(), from, v, to, options).toVal;

const values = Array.from({ length: 10_000 }, (_, i) => 20 + i / 100);

describe('unit conversion is resolved by UCUM once per (unit, storage unit) pair', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('converts 10,000 values of one pair sample by sample (toStorageUnit) with one UCUM resolution', () => {
    const spy = vi.spyOn(proto, 'convertUnitTo');
    for (const v of values) toStorageUnit('body_mass', v, 'lb');
    expect(spy).toHaveBeenCalledTimes(1);
    expect(toStorageUnit('body_mass', 150, 'lb')).toEqual({ value: 68.0388555, unit: 'kg' });
  });

  it('converts 10,000 values of one pair through a cached storage converter with one UCUM resolution', () => {
    const spy = vi.spyOn(proto, 'convertUnitTo');
    for (const v of values) storageUnitConverter('waist_circumference', 'in')!(v);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('converts 10,000 temperatures (a special, non-linear UCUM unit) with one UCUM resolution and UCUM’s own results', () => {
    const expected = values.map((v) => direct('[degF]', v, 'Cel'));
    const spy = vi.spyOn(proto, 'convertUnitTo');
    const got = values.map((v) => converter('[degF]', 'Cel')!(v));
    expect(spy).toHaveBeenCalledTimes(1);
    expect(got).toEqual(expected);
    expect(toStorageUnit('body_temperature', 98.6, 'degF')).toEqual({ value: 37, unit: 'degC' });
  });

  it('converts 10,000 amounts of substance to masses given a molar mass with one UCUM resolution and UCUM’s own results', () => {
    const glucose = 180.156;
    const expected = values.map((v) => direct('mmol/L', v, 'mg/dL', { molecularWeight: glucose }));
    const spy = vi.spyOn(proto, 'convertUnitTo');
    const got = values.map((v) => molarConverter('mmol/L', 'mg/dL', glucose)!(v));
    expect(spy).toHaveBeenCalledTimes(1);
    expect(got).toEqual(expected);
    expect(molarConverter('mmol/L', 'kg', glucose)).toBeNull();
  });

  it('remembers that a unit does not convert, so a stranger’s unknown unit is resolved once, not per sample', () => {
    const spy = vi.spyOn(proto, 'convertUnitTo');
    for (let i = 0; i < 1_000; i++) expect(converter('[furlong_stranger]', 'm')).toBeNull();
    for (let i = 0; i < 1_000; i++) expect(storageUnitConverter('heart_rate', 'kg')).toBeNull();
    expect(spy).toHaveBeenCalledTimes(2);
  });
});
