import type { SleepPhase, SleepSessionRecord } from '../../commands/ingestion/records.js';
import type { Change } from '../../src/readstore/readStore.js';
import { childProvenance, ownedFields, replaceChildren, utcDay, type OwnedFields, type RecordDocBase } from './recordDoc.js';
import { childKey, childRecordId } from './recordIds.js';
import { stageDurations, type StageDurations } from './sleepStages.js';
import { sleepMergeRule } from '../../src/merge/kindMergeRules.js';
import { withMergedView } from './mergedView/mergedFlags.js';
import { defineRecordsProjection, recordUpsert, RECORD_BOOLEANS, RECORD_COLUMNS } from './recordProjection.js';

/** A stored session: the record's fields, its stage durations as sleepStages.ts reads them. */
export type SleepSessionDoc = Omit<SleepSessionRecord, 'kind' | 'phases' | keyof StageDurations> & StageDurations & RecordDocBase;

/**
 * A phase of a session (spec "Sleep phase"). It names its session by the session's natural key:
 * a re-sent session keeps the integer id it got first, which evolve cannot know, so the reads
 * answer `session_id` from the session row.
 */
export type SleepPhaseDoc = OwnedFields & {
  _id: string;
  id: number;
  session_key: string;
  phase: SleepPhase['phase'];
  start_date: string;
  end_date: string;
  duration_s: number;
  provider: string;
  source: string;
  device: string | null;
  body_worn: boolean;
};

/**
 * Sleep sessions and their phases. A session re-sent with the same external_id updates the
 * session (keeping its id) and replaces all of its phases.
 */
export const sleepProjection = withMergedView(
  defineRecordsProjection<SleepSessionRecord>({
    name: 'sleep',
    eventType: 'sleep_sessions.ingested',
    collections: [
      {
        name: 'sleep_sessions',
        columns: RECORD_COLUMNS,
        booleans: RECORD_BOOLEANS,
        indexes: [
          // List by bedtime_start, and the merged view's neighbourhood.
          { fields: [['user_id', 1], ['bedtime_start', 1], ['id', 1]] },
          // A session by its integer id (phases route).
          { fields: [['user_id', 1], ['id', 1]] },
          { fields: [['user_id', 1], ['day', 1]] },
        ],
      },
      {
        name: 'sleep_phases',
        indexes: [
          { fields: [['user_id', 1], ['session_key', 1], ['start_date', 1], ['id', 1]] },
        ],
      },
    ],
    evolve: (event, sequence) => {
      const d = event.data;
      const changes: Change[] = [];
      let child = 0;
      d.records.forEach((r, i) => {
        const { kind: _kind, phases, ...fields } = r;
        const session = recordUpsert(event, sequence, 'sleep_sessions', i, { ...fields, ...stageDurations(r) }, utcDay(r.bedtime_start));
        const key = session.id;
        const docs = phases.map(
          (p, j): SleepPhaseDoc => ({
            _id: childKey(key, j),
            id: childRecordId(sequence, child++),
            session_key: key,
            phase: p.phase,
            start_date: p.start_date,
            end_date: p.end_date,
            duration_s: (Date.parse(p.end_date) - Date.parse(p.start_date)) / 1000,
            ...childProvenance(r),
            body_worn: r.body_worn,
            ...ownedFields(d, utcDay(p.start_date)),
          }),
        );
        changes.push(session, ...replaceChildren('sleep_phases', { user_id: d.user_id, session_key: key }, docs));
      });
      return changes;
    },
  }),
  {
    collection: 'sleep_sessions',
    startField: 'bedtime_start',
    endField: 'bedtime_end',
    rule: (_, priorities) => sleepMergeRule(priorities),
    ordersCollection: 'sleep_source_orders',
  },
);
