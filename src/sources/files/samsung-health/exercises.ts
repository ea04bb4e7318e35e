import type { NormalizedRecord, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { rowTimes } from './measurements.js';
import { cell, type RowCommon } from './samsungFiles.js';
import { samsungExercise } from './vocabulary.js';

/**
 * Exercise sessions (`com.samsung.shealth.exercise`, 60-odd columns, the SDK's own prefixed with
 * `com.samsung.health.exercise.`): type, times, `duration` (ms), `calorie` (kcal), `distance` (m),
 * heart rate, and `count` when `count_type` is 30001 (strides, i.e. steps). Routes and live data
 * sit in `jsons/` files the export references; they are not read.
 */

export const EXERCISE_TYPES: ReadonlySet<string> = new Set(['com.samsung.shealth.exercise', 'com.samsung.health.exercise']);
const COUNT_TYPE_STRIDE = 30001;

export function decodeExercise(v: Record<string, string | undefined>, c: RowCommon): NormalizedRecord[] {
  const { start, end } = rowTimes(v, 'interval');
  if (end <= start) throw new RecordError('end_time is not after start_time');
  const code = cell(v.exercise_type, 'exercise_type');
  const exercise = samsungExercise(code);
  const durationMs = cell(v.duration, 'duration', { min: 0 });
  const countType = cell(v.count_type, 'count_type');
  const count = cell(v.count, 'count', { min: 0 });
  const maxHr = cell(v.max_heart_rate, 'max_heart_rate', { min: 0 });
  const meanHr = cell(v.mean_heart_rate, 'mean_heart_rate', { min: 0 });
  const workout: WorkoutRecord = {
    kind: 'workout',
    ...c.provenance,
    external_id: c.id,
    type: exercise.activity,
    start_date: new Date(start).toISOString(),
    end_date: new Date(end).toISOString(),
    duration_s: Math.round((durationMs !== null && durationMs > 0 ? durationMs : end - start) / 1000),
    active_energy_kcal: cell(v.calorie, 'calorie', { min: 0 }),
    distance_m: nonZero(cell(v.distance, 'distance', { min: 0 })),
    avg_heart_rate: nonZero(meanHr),
    max_heart_rate: nonZero(maxHr),
    steps: countType === COUNT_TYPE_STRIDE ? count : null,
    route: [],
    metadata: {
      ...c.metadata,
      exercise_type: code,
      exercise_type_name: exercise.name,
      title: v.title ?? v.exercise_custom_type ?? null,
      count,
      count_type: countType,
      min_heart_rate: nonZero(cell(v.min_heart_rate, 'min_heart_rate', { min: 0 })),
      mean_speed_mps: cell(v.mean_speed, 'mean_speed', { min: 0 }),
      max_speed_mps: cell(v.max_speed, 'max_speed', { min: 0 }),
      altitude_gain_m: cell(v.altitude_gain, 'altitude_gain', { min: 0 }),
      vo2_max: cell(v.vo2_max, 'vo2_max', { min: 0 }),
      source_type: cell(v.source_type, 'source_type'),
    },
  };
  return [workout];
}

const nonZero = (v: number | null) => (v === null || v === 0 ? null : v);
