import type { DailySummaryRecord } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, optionalNumber, RecordError, type Json } from '../../shared/connectorRecords.js';
import { readDate } from '../../shared/providerTimes.js';
import { localZone, zonedDate } from '../../shared/zonedLocalTime.js';
import { withingsProvenance } from './provenance.js';

/**
 * One day of `getactivity`: the day's totals in the user's zone of that day (`timezone`).
 * `calories` is the active energy, `totalcalories` adds the resting part (kept in metadata). A
 * day still running when the answer was received is marked `in_progress`; a later pull of the
 * same day replaces it (same external_id).
 */
export function decodeActivityDay(day: Json, body: Json, receivedAt: string): DailySummaryRecord[] {
  const date = readDate(day.date, 'date');
  const timezone = typeof day.timezone === 'string' ? day.timezone : typeof body.timezone === 'string' ? body.timezone : null;
  const steps = optionalNumber(day.steps, 'steps');
  const calories = optionalNumber(day.calories, 'calories');
  const distance = optionalNumber(day.distance, 'distance');
  const hrAverage = optionalNumber(day.hr_average, 'hr_average');
  for (const [field, v] of [['steps', steps], ['calories', calories], ['distance', distance]] as const) {
    if (v !== null && v < 0) throw new RecordError(`${field} is negative`);
  }
  const today = timezone ? zonedDate(Date.parse(receivedAt), localZone(timezone, 0)) : null;
  const tracker = day.is_tracker === true;
  return [
    {
      kind: 'daily_summary',
      ...withingsProvenance(tracker ? 'Withings tracker' : null, tracker),
      external_id: `activity-${date}`,
      date,
      steps: steps === null ? null : Math.round(steps),
      active_energy_kcal: calories,
      distance_m: distance,
      resting_heart_rate: null,
      // Withings leaves hr_average 0 on days without heart rate readings.
      avg_heart_rate: hrAverage ? hrAverage : null,
      sleep_seconds: null,
      metadata: { ...fieldsExcept(day, ['date', 'timezone', 'steps', 'calories', 'distance']), timezone, ...(today === date ? { in_progress: true } : {}) },
    },
  ];
}
