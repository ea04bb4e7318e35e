/**
 * Withings measure types (`meastype`) this connector reads, each with the catalog quantity type it
 * becomes and the unit Withings' `value × 10^unit` is in. Blood pressure (9 diastolic, 10
 * systolic) also forms one observation per measure group. Types without a catalog counterpart
 * (fat mass weight 8, muscle mass 76, hydration 77, bone mass 88, pulse wave velocity 91, ECG
 * intervals 135–138, skin temperature 73, …) are not asked for.
 */
export type MeasureSpec = { type: string; unit: string; min: number; max: number };

export const MEASURE_TYPES: Readonly<Record<number, MeasureSpec>> = {
  1: { type: 'body_mass', unit: 'kg', min: 1, max: 600 },
  4: { type: 'height', unit: 'm', min: 0.3, max: 2.8 },
  5: { type: 'lean_body_mass', unit: 'kg', min: 1, max: 300 },
  6: { type: 'body_fat_percentage', unit: '%', min: 0, max: 100 },
  9: { type: 'blood_pressure_diastolic', unit: 'mmHg', min: 10, max: 180 },
  10: { type: 'blood_pressure_systolic', unit: 'mmHg', min: 20, max: 300 },
  11: { type: 'heart_rate', unit: 'count/min', min: 1, max: 300 },
  12: { type: 'body_temperature', unit: 'degC', min: 25, max: 45 },
  54: { type: 'oxygen_saturation', unit: '%', min: 0, max: 100 },
  71: { type: 'body_temperature', unit: 'degC', min: 25, max: 45 },
  123: { type: 'vo2_max', unit: 'mL/(kg*min)', min: 1, max: 100 },
  226: { type: 'basal_metabolic_rate', unit: 'kcal/d', min: 100, max: 10_000 },
};

/** The `meastypes` parameter of a getmeas call: every type above. */
export const MEASTYPES_PARAM = Object.keys(MEASURE_TYPES).join(',');

export const DIASTOLIC = 9;
export const SYSTOLIC = 10;

/** Measure group categories: 1 a real measurement, 2 a goal the user set (never a reading). */
export const REAL_MEASUREMENT = 1;

/** Group `attrib` values that mean the user typed the value in. */
export const USER_ENTERED_ATTRIBS: ReadonlySet<number> = new Set([2, 4]);
