import type { NormalizedRecord, Provenance, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, optionalNumber, optionalString, RecordError, requiredString, type Json } from '../../shared/connectorRecords.js';
import { iso, readInstant } from '../../shared/providerTimes.js';
import { ouraActivity } from './vocabulary.js';

/**
 * Oura workouts: `activity` (Oura's name, mapped in vocabulary.ts), `calories` (kcal),
 * `distance` (m), `start_datetime`/`end_datetime` at the user's offset. `source: manual` is a
 * workout the user typed in: not a body-worn measurement.
 */
export function decodeWorkout(doc: Json, p: Provenance): NormalizedRecord[] {
  const id = requiredString(doc.id, 'id');
  const start = readInstant(doc.start_datetime, 'start_datetime');
  const end = readInstant(doc.end_datetime, 'end_datetime');
  if (end.ms <= start.ms) throw new RecordError('end_datetime is not after start_datetime');
  const activity = requiredString(doc.activity, 'activity');
  const calories = optionalNumber(doc.calories, 'calories');
  const distance = optionalNumber(doc.distance, 'distance');
  if ((calories ?? 0) < 0 || (distance ?? 0) < 0) throw new RecordError('calories or distance is negative');
  const source = optionalString(doc.source, 'source');
  const record: WorkoutRecord = {
    kind: 'workout',
    ...p,
    body_worn: p.body_worn && source !== 'manual',
    external_id: `workout:${id}`,
    type: ouraActivity(activity),
    start_date: iso(start.ms),
    end_date: iso(end.ms),
    duration_s: (end.ms - start.ms) / 1000,
    active_energy_kcal: calories,
    distance_m: distance,
    avg_heart_rate: null,
    max_heart_rate: null,
    steps: null,
    route: [],
    metadata: { ...fieldsExcept(doc, []), timezone: start.offset, ...(end.offset !== start.offset ? { end_timezone: end.offset } : {}), was_user_entered: source === 'manual' },
  };
  return [record];
}
