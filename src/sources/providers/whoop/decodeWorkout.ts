import type { NormalizedRecord, Provenance, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { convert, isObject, optionalNumber, optionalString, RecordError, requiredString, type Json } from '../../shared/connectorRecords.js';
import { iso } from '../../shared/providerTimes.js';
import { whoopActivity } from './sports.js';
import { amount, scoreOf, secondsOf, spanOf } from './whoopFields.js';

const ZONES = ['zero', 'one', 'two', 'three', 'four', 'five'] as const;

/**
 * A WHOOP workout: sport (sports.ts), strain, heart rate, `kilojoule` (kJ → kcal), distance and
 * altitude in metres, and time in each heart-rate zone (ms → seconds, in metadata). A workout
 * WHOOP has not scored yet is stored without its figures and updated when a later pull has them.
 */
export function decodeWorkout(doc: Json, p: Provenance): NormalizedRecord[] {
  const id = typeof doc.id === 'number' ? String(doc.id) : requiredString(doc.id, 'id');
  const span = spanOf(doc);
  if (!span.end) return []; // still in progress
  if (span.end.ms <= span.start.ms) throw new RecordError('end is not after start');
  const score = scoreOf(doc);
  const sportName = optionalString(doc.sport_name, 'sport_name');
  const sportId = optionalNumber(doc.sport_id, 'sport_id');
  const kj = score ? amount(score, 'kilojoule', 'score.kilojoule') : null;
  let zones: Record<string, number> | null = null;
  if (score && isObject(score.zone_durations)) {
    const z = score.zone_durations;
    zones = Object.fromEntries(ZONES.map((n, i) => [`zone_${i}`, secondsOf(amount(z, `zone_${n}_milli`, `score.zone_durations.zone_${n}_milli`))]));
  }
  const record: WorkoutRecord = {
    kind: 'workout',
    ...p,
    external_id: `workout:${id}`,
    type: whoopActivity(sportName, sportId),
    start_date: iso(span.start.ms),
    end_date: iso(span.end.ms),
    duration_s: (span.end.ms - span.start.ms) / 1000,
    active_energy_kcal: kj === null ? null : convert(kj, 'kJ', 'kcal'),
    distance_m: score ? amount(score, 'distance_meter', 'score.distance_meter') : null,
    avg_heart_rate: score ? amount(score, 'average_heart_rate', 'score.average_heart_rate') : null,
    max_heart_rate: score ? amount(score, 'max_heart_rate', 'score.max_heart_rate') : null,
    steps: null,
    route: [],
    metadata: {
      workout_id: id,
      sport_id: sportId,
      sport_name: sportName,
      score_state: doc.score_state,
      strain: score?.strain ?? null,
      kilojoule: kj,
      percent_recorded: score?.percent_recorded ?? null,
      altitude_gain_meter: score?.altitude_gain_meter ?? null,
      altitude_change_meter: score?.altitude_change_meter ?? null,
      heart_rate_zone_seconds: zones,
      ...span.zone,
    },
  };
  return [record];
}
