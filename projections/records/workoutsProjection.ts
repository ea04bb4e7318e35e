import type { RoutePoint, WorkoutRecord } from '../../commands/ingestion/records.js';
import type { Change } from '../../src/readstore/readStore.js';
import { childProvenance, ownedFields, replaceChildren, utcDay, type OwnedFields, type RecordDocBase } from './recordDoc.js';
import { childKey } from './recordIds.js';
import { workoutMergeRule } from '../../src/merge/kindMergeRules.js';
import { withMergedView } from './mergedView/mergedFlags.js';
import { defineRecordsProjection, recordUpsert, RECORD_BOOLEANS, RECORD_COLUMNS } from './recordProjection.js';
import { orderedRoute, trackSummary, type TrackSummary } from './track.js';

export type WorkoutDoc = Omit<WorkoutRecord, 'kind' | 'route'> & RecordDocBase & { track: TrackSummary | null };

/** One GPS point of a workout's route; names its workout by the workout's natural key. */
export type RoutePointDoc = RoutePoint &
  OwnedFields & {
    _id: string;
    workout_key: string;
    provider: string;
    source: string;
    device: string | null;
  };

/**
 * Workouts, their track summaries and route points. A workout re-sent with the same external_id
 * updates the workout (keeping its id), recomputes the summary and replaces the route.
 */
export const workoutsProjection = withMergedView(
  defineRecordsProjection<WorkoutRecord>({
    name: 'workouts',
    eventType: 'workouts.ingested',
    collections: [
      {
        name: 'workouts',
        columns: RECORD_COLUMNS,
        booleans: RECORD_BOOLEANS,
        indexes: [
          // List of every activity, and the merged view's neighbourhood.
          { fields: [['user_id', 1], ['start_date', 1], ['id', 1]] },
          { fields: [['user_id', 1], ['type', 1], ['start_date', 1], ['id', 1]] },
          // A workout by its integer id (route).
          { fields: [['user_id', 1], ['id', 1]] },
          { fields: [['user_id', 1], ['day', 1]] },
        ],
      },
      {
        name: 'workout_route_points',
        indexes: [
          { fields: [['user_id', 1], ['workout_key', 1], ['timestamp', 1], ['_id', 1]] },
        ],
      },
    ],
    evolve: (event, sequence) => {
      const d = event.data;
      const changes: Change[] = [];
      d.records.forEach((r, i) => {
        const { kind: _kind, route, ...fields } = r;
        const workout = recordUpsert(event, sequence, 'workouts', i, { ...fields, track: trackSummary(route) }, utcDay(r.start_date));
        const key = workout.id;
        const docs = orderedRoute(route).map(
          (p, j): RoutePointDoc => ({
            _id: childKey(key, j),
            workout_key: key,
            timestamp: p.timestamp,
            latitude: p.latitude,
            longitude: p.longitude,
            altitude_m: p.altitude_m,
            speed_mps: p.speed_mps,
            course_deg: p.course_deg,
            horizontal_accuracy_m: p.horizontal_accuracy_m,
            ...childProvenance(r),
            ...ownedFields(d, utcDay(p.timestamp)),
          }),
        );
        changes.push(workout, ...replaceChildren('workout_route_points', { user_id: d.user_id, workout_key: key }, docs));
      });
      return changes;
    },
  }),
  {
    collection: 'workouts',
    startField: 'start_date',
    endField: 'end_date',
    rule: (_, priorities) => workoutMergeRule(priorities),
    ordersCollection: 'workout_source_orders',
  },
);
