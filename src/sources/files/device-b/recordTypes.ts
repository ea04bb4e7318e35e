import type { Bounds, UnitClass } from './unitMapping.js';

/**
 * The Health Connect record types this parser reads. A scalar record is one quantity sample: its
 * catalog type, whether it is an instant or an interval, the field holding its value, that
 * value's unit class (or the UCUM unit of a plain number), and the range a value must fall in.
 */

export type ScalarSpec = {
  type: string;
  shape: 'instant' | 'interval';
  field: string;
  /** A unit class, or the UCUM unit of a plain number (Long / Double properties). */
  unit: { cls: UnitClass } | { number: string };
  bounds: Bounds;
};

export const SCALARS: Readonly<Record<string, ScalarSpec>> = {
  Steps: { type: 'step_count', shape: 'interval', field: 'count', unit: { number: '1' }, bounds: { min: 0, max: 1_000_000, ucum: '1' } },
  ActiveCaloriesBurned: { type: 'active_energy_burned', shape: 'interval', field: 'energy', unit: { cls: 'energy' }, bounds: { min: 0, max: 1_000_000, ucum: 'kcal' } },
  TotalCaloriesBurned: { type: 'total_energy_burned', shape: 'interval', field: 'energy', unit: { cls: 'energy' }, bounds: { min: 0, max: 1_000_000, ucum: 'kcal' } },
  Distance: { type: 'distance', shape: 'interval', field: 'distance', unit: { cls: 'length' }, bounds: { min: 0, max: 1_000_000, ucum: 'm' } },
  FloorsClimbed: { type: 'flights_climbed', shape: 'interval', field: 'floors', unit: { number: '1' }, bounds: { min: 0, max: 1_000_000, ucum: '1' } },
  Hydration: { type: 'dietary_water', shape: 'interval', field: 'volume', unit: { cls: 'volume' }, bounds: { min: 0, max: 100, ucum: 'L' } },
  Weight: { type: 'body_mass', shape: 'instant', field: 'weight', unit: { cls: 'mass' }, bounds: { min: 0, max: 1000, ucum: 'kg' } },
  Height: { type: 'height', shape: 'instant', field: 'height', unit: { cls: 'length' }, bounds: { min: 0, max: 3, ucum: 'm' } },
  BodyFat: { type: 'body_fat_percentage', shape: 'instant', field: 'percentage', unit: { cls: 'percentage' }, bounds: { min: 0, max: 100, ucum: '%' } },
  OxygenSaturation: { type: 'oxygen_saturation', shape: 'instant', field: 'percentage', unit: { cls: 'percentage' }, bounds: { min: 0, max: 100, ucum: '%' } },
  BodyTemperature: { type: 'body_temperature', shape: 'instant', field: 'temperature', unit: { cls: 'temperature' }, bounds: { min: 0, max: 100, ucum: 'Cel' } },
  RestingHeartRate: { type: 'resting_heart_rate', shape: 'instant', field: 'beatsPerMinute', unit: { number: '/min' }, bounds: { min: 0, max: 300, ucum: '/min' } },
  HeartRateVariabilityRmssd: { type: 'hrv_rmssd', shape: 'instant', field: 'heartRateVariabilityMillis', unit: { number: 'ms' }, bounds: { min: 1, max: 200, ucum: 'ms' } },
  RespiratoryRate: { type: 'respiratory_rate', shape: 'instant', field: 'rate', unit: { number: '/min' }, bounds: { min: 0, max: 1000, ucum: '/min' } },
  BloodGlucose: { type: 'blood_glucose', shape: 'instant', field: 'level', unit: { cls: 'bloodGlucose' }, bounds: { min: 0, max: 50, ucum: 'mmol/L' } },
  Vo2Max: { type: 'vo2_max', shape: 'instant', field: 'vo2MillilitersPerMinuteKilogram', unit: { number: 'mL/(kg.min)' }, bounds: { min: 0, max: 100, ucum: 'mL/(kg.min)' } },
  BasalMetabolicRate: { type: 'basal_metabolic_rate', shape: 'instant', field: 'basalMetabolicRate', unit: { cls: 'power' }, bounds: { min: 0, max: 10_000, ucum: 'kcal/d' } },
};

/** Every record type this parser reads, for docs and tests. */
export const HEALTH_CONNECT_RECORD_TYPES: readonly string[] = [
  'HeartRate',
  ...Object.keys(SCALARS),
  'SleepSession',
  'ExerciseSession',
  'BloodPressure',
  'Nutrition',
  'MenstruationFlow',
  'MenstruationPeriod',
];

export const HEART_RATE_BOUNDS: Bounds = { min: 1, max: 300, ucum: '/min' };
export const SYSTOLIC_BOUNDS: Bounds = { min: 20, max: 200, ucum: 'mm[Hg]' };
export const DIASTOLIC_BOUNDS: Bounds = { min: 10, max: 180, ucum: 'mm[Hg]' };
