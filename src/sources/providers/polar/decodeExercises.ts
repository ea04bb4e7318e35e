import type { NormalizedRecord, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, isObject, optionalNumber, optionalString, quantity, RecordError, type Json } from '../../shared/connectorRecords.js';
import { iso } from '../../shared/providerTimes.js';
import { zonedInstant } from '../../shared/zonedLocalTime.js';
import { isoDurationSeconds } from './isoDuration.js';
import { DELIVERY_FIELDS, fixedZone, offsetOfMinutes, polarProvenance } from './polarTimes.js';
import { HEART_RATE_SAMPLE, polarActivity } from './sports.js';

/** Where an exercise starts: `start-time` is local wall time, `start-time-utc-offset` its offset in minutes. */
export function exerciseStart(e: Json): { ms: number; offset: string } {
  const minutes = optionalNumber(e['start-time-utc-offset'], 'start-time-utc-offset');
  if (minutes === null || !Number.isInteger(minutes) || Math.abs(minutes) > 18 * 60) throw new RecordError('start-time-utc-offset is missing or not an offset in minutes');
  const offset = offsetOfMinutes(minutes);
  return { ms: zonedInstant(e['start-time'], fixedZone(offset), 'start-time').ms, offset };
}

/** An exercise summary: a workout with the sport, calories, distance and heart rate as Polar summed them. */
export function decodeExercise(e: Json): WorkoutRecord[] {
  const id = e.id;
  if (typeof id !== 'number' && typeof id !== 'string') throw new RecordError('id is missing');
  const start = exerciseStart(e);
  const duration = isoDurationSeconds(e.duration, 'duration');
  const hr = e['heart-rate'] ?? {};
  if (!isObject(hr)) throw new RecordError('heart-rate is not an object');
  const positive = (v: number | null) => (v ? v : null);
  const calories = optionalNumber(e.calories, 'calories');
  const distance = optionalNumber(e.distance, 'distance');
  if ((calories ?? 0) < 0 || (distance ?? 0) < 0) throw new RecordError('calories or distance is negative');
  return [
    {
      kind: 'workout',
      ...polarProvenance(optionalString(e.device, 'device')),
      external_id: `exercise-${id}`,
      type: polarActivity(e['detailed-sport-info'], e.sport),
      start_date: iso(start.ms),
      end_date: iso(start.ms + duration * 1000),
      duration_s: duration,
      active_energy_kcal: calories,
      distance_m: distance,
      avg_heart_rate: positive(optionalNumber(hr.average, 'heart-rate.average')),
      max_heart_rate: positive(optionalNumber(hr.maximum, 'heart-rate.maximum')),
      steps: null,
      route: [],
      metadata: { ...fieldsExcept(e, ['heart-rate', 'start-time', 'start-time-utc-offset', 'calories', 'distance', ...DELIVERY_FIELDS]), timezone: start.offset },
    },
  ];
}

/**
 * An exercise's heart rate samples, stored as `{exercise, samples}`: `exercise` is the part of
 * its summary that places them (id, start-time, start-time-utc-offset, device), `samples` Polar's
 * answer as sent: comma-separated values `recording-rate` seconds apart. 0 is a gap.
 */
export function decodeExerciseSamples(doc: Json): NormalizedRecord[] {
  const e = doc.exercise;
  const s = doc.samples;
  if (!isObject(e) || !isObject(s)) throw new RecordError('exercise samples are not {exercise, samples}');
  if (String(s['sample-type']) !== HEART_RATE_SAMPLE) return [];
  const rate = optionalNumber(s['recording-rate'], 'recording-rate');
  if (!rate || rate <= 0) throw new RecordError('recording-rate is missing');
  if (typeof s.data !== 'string') throw new RecordError('data is not a comma-separated string');
  const start = exerciseStart(e);
  const p = polarProvenance(optionalString(e.device, 'device'));
  const out: NormalizedRecord[] = [];
  s.data.split(',').forEach((v, i) => {
    const bpm = Number(v);
    if (v.trim() === '' || !Number.isFinite(bpm)) throw new RecordError(`data[${i}] ${JSON.stringify(v).slice(0, 20)} is not a number`);
    if (bpm <= 0) return;
    if (bpm > 300) throw new RecordError(`data[${i}] ${bpm} is not a heart rate`);
    const t = start.ms + i * rate * 1000;
    out.push(quantity(p, { external_id: `exercise-${e.id}-hr-${i}`, type: 'heart_rate', value: bpm, unit: 'count/min', start: t, end: t, metadata: { timezone: start.offset, context: 'exercise', exercise_id: e.id } }));
  });
  return out;
}
