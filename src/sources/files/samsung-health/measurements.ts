import type { NormalizedRecord, QuantityRecord } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { bloodPressureObservation, catalogQuantity } from '../exportShared/catalogRecords.js';
import { cell, requiredCell, utcTime, type RowCommon } from './samsungFiles.js';

/**
 * Data types of one row per measurement. Each value column becomes a quantity sample of a catalog
 * type; a row with several (a weigh-in: weight, body fat, fat-free mass, BMR) gives several, with
 * ids `<datauuid>:<type>`, a row with one takes its `datauuid` as is.
 */

type Output = { column: string; type: string; ucum: string; min?: number; max?: number; skipZero?: boolean };
export type MeasurementSpec = { shape: 'instant' | 'interval'; outputs: readonly Output[]; extra: readonly string[] };

const HEART_RATE: MeasurementSpec = { shape: 'interval', outputs: [{ column: 'heart_rate', type: 'heart_rate', ucum: '/min', min: 1 }], extra: ['min', 'max', 'heart_beat_count', 'tag_id', 'source'] };
const SPO2: MeasurementSpec = { shape: 'interval', outputs: [{ column: 'spo2', type: 'oxygen_saturation', ucum: '%', min: 1, max: 100 }], extra: ['heart_rate', 'min', 'max', 'low_duration', 'tag_id', 'source'] };
const WEIGHT: MeasurementSpec = {
  shape: 'instant',
  outputs: [
    { column: 'weight', type: 'body_mass', ucum: 'kg', min: 0.5 },
    { column: 'body_fat', type: 'body_fat_percentage', ucum: '%', max: 100, skipZero: true },
    { column: 'fat_free_mass', type: 'lean_body_mass', ucum: 'kg', skipZero: true },
    { column: 'basal_metabolic_rate', type: 'basal_metabolic_rate', ucum: 'kcal/d', skipZero: true },
  ],
  extra: ['height', 'body_fat_mass', 'muscle_mass', 'skeletal_muscle', 'skeletal_muscle_mass', 'total_body_water', 'vfa_level'],
};
const FLOORS: MeasurementSpec = { shape: 'interval', outputs: [{ column: 'floor', type: 'flights_climbed', ucum: '1', skipZero: true }], extra: [] };
const STEPS: MeasurementSpec = { shape: 'interval', outputs: [{ column: 'count', type: 'step_count', ucum: '1', skipZero: true }], extra: ['distance', 'calorie', 'speed', 'run_step', 'walk_step', 'sample_position_type'] };
const GLUCOSE: MeasurementSpec = { shape: 'instant', outputs: [{ column: 'glucose', type: 'blood_glucose', ucum: 'mmol/L', min: 0.1 }], extra: ['meal_time', 'meal_type', 'sample_source_type', 'measurement_type'] };
const TEMPERATURE: MeasurementSpec = { shape: 'instant', outputs: [{ column: 'temperature', type: 'body_temperature', ucum: 'Cel', min: 20, max: 50 }], extra: [] };
const WATER: MeasurementSpec = { shape: 'instant', outputs: [{ column: 'amount', type: 'dietary_water', ucum: 'mL', skipZero: true }], extra: ['unit_amount'] };

export const MEASUREMENTS: ReadonlyMap<string, MeasurementSpec> = new Map([
  ['com.samsung.shealth.tracker.heart_rate', HEART_RATE],
  ['com.samsung.health.heart_rate', HEART_RATE],
  ['com.samsung.shealth.tracker.oxygen_saturation', SPO2],
  ['com.samsung.health.oxygen_saturation', SPO2],
  ['com.samsung.health.weight', WEIGHT],
  ['com.samsung.health.floors_climbed', FLOORS],
  ['com.samsung.shealth.tracker.pedometer_step_count', STEPS],
  ['com.samsung.health.step_count', STEPS],
  ['com.samsung.health.blood_glucose', GLUCOSE],
  ['com.samsung.health.body_temperature', TEMPERATURE],
  ['com.samsung.health.water_intake', WATER],
]);

export const BLOOD_PRESSURE_TYPES: ReadonlySet<string> = new Set(['com.samsung.shealth.blood_pressure', 'com.samsung.health.blood_pressure']);

export function rowTimes(values: Record<string, string | undefined>, shape: 'instant' | 'interval'): { start: number; end: number } {
  const start = utcTime(values.start_time, 'start_time');
  if (shape === 'instant' || values.end_time === undefined) return { start, end: start };
  const end = utcTime(values.end_time, 'end_time');
  if (end < start) throw new RecordError('end_time is before start_time');
  return { start, end };
}

export function samsungQuantity(c: RowCommon, externalId: string, type: string, stored: { value: number; ucum: string }, t: { start: number; end: number }, metadata: Record<string, unknown>): QuantityRecord {
  const sample = { source_name: null, source_bundle_id: c.pkg, device_model: c.deviceModel, product_type: null, was_user_entered: false };
  return catalogQuantity(c.provenance, sample, { external_id: externalId, type, stored, start: t.start, end: t.end, metadata });
}

export function decodeMeasurement(spec: MeasurementSpec, values: Record<string, string | undefined>, c: RowCommon): NormalizedRecord[] {
  const t = rowTimes(values, spec.shape);
  const extra: Record<string, unknown> = {};
  for (const col of spec.extra) if (values[col] !== undefined) extra[col] = /^-?\d+(\.\d+)?$/.test(values[col]!) ? Number(values[col]) : values[col];
  const metadata = { ...c.metadata, ...extra };
  const present = spec.outputs.filter((o) => values[o.column] !== undefined);
  if (present.length === 0) throw new RecordError(`${spec.outputs.map((o) => o.column).join(', ')} missing`);
  const out: NormalizedRecord[] = [];
  for (const o of present) {
    const value = o === spec.outputs[0] ? requiredCell(values[o.column], o.column, { min: o.min ?? 0, max: o.max }) : cell(values[o.column], o.column, { min: o.min ?? 0, max: o.max });
    if (value === null || (o.skipZero && value === 0)) continue;
    const id = spec.outputs.length === 1 ? c.id : `${c.id}:${o.type}`;
    out.push(samsungQuantity(c, id, o.type, { value, ucum: o.ucum }, t, metadata));
  }
  return out;
}

export function decodeBloodPressure(values: Record<string, string | undefined>, c: RowCommon): NormalizedRecord[] {
  const t = rowTimes(values, 'instant');
  const metadata = { ...c.metadata, pulse: cell(values.pulse, 'pulse', { min: 0 }), mean: cell(values.mean, 'mean', { min: 0 }) };
  const sys = samsungQuantity(c, `${c.id}:systolic`, 'blood_pressure_systolic', { value: requiredCell(values.systolic, 'systolic', { min: 1 }), ucum: 'mm[Hg]' }, t, metadata);
  const dia = samsungQuantity(c, `${c.id}:diastolic`, 'blood_pressure_diastolic', { value: requiredCell(values.diastolic, 'diastolic', { min: 1 }), ucum: 'mm[Hg]' }, t, metadata);
  return [bloodPressureObservation(c.provenance, c.id, sys, dia, metadata), sys, dia];
}
