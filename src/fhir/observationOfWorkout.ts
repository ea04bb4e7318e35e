import type { Observation, ObservationComponent } from 'fhir/r4.js';
import { metaWithQuality } from './qualityTags.js';
import type { WorkoutDoc } from '../../projections/records/workoutsProjection.js';
import { findQuantityType } from '../catalog/quantityCatalog.js';
import { loincCoding } from '../catalog/loincDisplays.js';
import { UCUM } from './observationOfSample.js';

/** LOINC "Duration of physical activity": a workout is its duration, the activity its text. */
export const WORKOUT_LOINC = '101691-4';

export const workoutObservationId = (id: number) => `workout-${id}`;
export function workoutIdOf(observationId: string): number | null {
  const m = /^workout-(\d{1,15})$/.exec(observationId);
  return m ? Number(m[1]) : null;
}

/** A component coded as the catalog codes the quantity type (LOINC and UCUM); absent values are left out. */
function component(type: string, text: string, value: number | null): ObservationComponent[] {
  const t = findQuantityType(type);
  if (value === null || !t?.loinc_code) return [];
  return [{ code: { coding: [loincCoding(t.loinc_code)], text }, valueQuantity: { value, unit: t.ucum_unit, system: UCUM, code: t.ucum_unit } }];
}

/** A workout as an R4 Observation over its period, with energy, steps and heart rate as components. */
export function observationOfWorkout(w: WorkoutDoc, patientId: string): Observation {
  const components = [
    ...component('active_energy_burned', 'Active energy', w.active_energy_kcal),
    ...component('step_count', 'Steps', w.steps),
    ...component('heart_rate', 'Average heart rate', w.avg_heart_rate),
    ...(w.distance_m === null ? [] : [{ code: { text: 'Distance' }, valueQuantity: { value: w.distance_m, unit: 'm', system: UCUM, code: 'm' } }]),
  ];
  return {
    resourceType: 'Observation',
    id: workoutObservationId(w.id),
    ...metaWithQuality(w.quality),
    status: 'final',
    category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'activity', display: 'Activity' }] }],
    code: { coding: [loincCoding(WORKOUT_LOINC)], text: `Workout: ${w.type.replace(/_/g, ' ')}` },
    subject: { reference: `Patient/${patientId}` },
    effectivePeriod: { start: w.start_date, end: w.end_date },
    valueQuantity: { value: Math.round((w.duration_s / 60) * 100) / 100, unit: 'min', system: UCUM, code: 'min' },
    ...(components.length ? { component: components } : {}),
    device: { display: w.device ?? w.source },
  };
}
