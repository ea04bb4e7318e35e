import type { WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, isObject, optionalNumber, RecordError, type Json } from '../../shared/connectorRecords.js';
import { iso } from '../../shared/providerTimes.js';
import { withingsProvenance } from './provenance.js';
import { epochSeconds } from './withingsAnswer.js';
import { workoutActivity } from './workoutCategories.js';

/**
 * One `getworkouts` series entry. Duration is the effective duration Withings measured
 * (`effduration`, pauses excluded), else the span. Values the user typed in (`manual_calories`,
 * `manual_distance`) stand in only where the device measured nothing. Withings sends 0 for a
 * heart rate it did not measure; that is read as unknown.
 */
export function decodeWorkout(w: Json, body: Json): WorkoutRecord[] {
  const start = epochSeconds(w.startdate, 'startdate');
  const end = epochSeconds(w.enddate, 'enddate');
  if (end < start) throw new RecordError('enddate is before startdate');
  if (typeof w.category !== 'number') throw new RecordError('category is missing');
  const data = w.data ?? {};
  if (!isObject(data)) throw new RecordError('data is not an object');
  const num = (f: string) => {
    const v = optionalNumber(data[f], `data.${f}`);
    if (v !== null && v < 0) throw new RecordError(`data.${f} is negative`);
    return v;
  };
  const measuredOr = (measured: number | null, manual: number | null) => (measured ? measured : manual ? manual : measured);
  const positive = (v: number | null) => (v ? v : null);
  const id = typeof w.id === 'number' || typeof w.id === 'string' ? String(w.id) : `${w.startdate}-${w.category}`;
  const timezone = typeof w.timezone === 'string' ? w.timezone : typeof body.timezone === 'string' ? body.timezone : null;
  const effective = num('effduration');
  return [
    {
      kind: 'workout',
      ...withingsProvenance(null, true),
      external_id: `workout-${id}`,
      type: workoutActivity(w.category),
      start_date: iso(start),
      end_date: iso(end),
      duration_s: effective ?? (end - start) / 1000,
      active_energy_kcal: measuredOr(num('calories'), num('manual_calories')),
      distance_m: measuredOr(num('distance'), num('manual_distance')),
      avg_heart_rate: positive(num('hr_average')),
      max_heart_rate: positive(num('hr_max')),
      steps: num('steps'),
      route: [],
      metadata: { ...fieldsExcept(w, ['data', 'timezone', 'startdate', 'enddate']), ...fieldsExcept(data, ['calories', 'distance', 'hr_average', 'hr_max', 'steps']), timezone },
    },
  ];
}
