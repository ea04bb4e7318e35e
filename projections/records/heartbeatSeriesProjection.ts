import type { HeartbeatSeriesRecord } from '../../commands/ingestion/records.js';
import type { Change } from '../../src/readstore/readStore.js';
import { hrvFigures, orderedBeats, rrIntervalsMs } from './hrv.js';
import { ownedFields, utcDay, type OwnedFields, type RecordDocBase } from './recordDoc.js';
import { childKey } from './recordIds.js';
import { defineRecordsProjection, recordUpsert, RECORD_BOOLEANS, RECORD_COLUMNS } from './recordProjection.js';

/** A heartbeat series with its derived HRV (see hrv.ts); the beats themselves are rr_intervals rows. */
export type HeartbeatSeriesDoc = Omit<HeartbeatSeriesRecord, 'kind' | 'beats'> &
  RecordDocBase & {
    /** Time of the first beat (start_date when the series has no beats). */
    first_beat: string;
    /** Number of beats. */
    beats: number;
    rmssd_ms: number | null;
    sdnn_ms: number | null;
  };

/** One beat of a series: its time and the RR interval ending at it (null after a gap and for the first beat). */
export type RrIntervalDoc = OwnedFields & {
  _id: string;
  series_key: string;
  timestamp: string;
  rr_ms: number | null;
  preceded_by_gap: boolean;
  provider: string;
  source: string;
  device: string | null;
};

const plusSeconds = (iso: string, s: number) => new Date(Date.parse(iso) + Math.round(s * 1000)).toISOString();

/** Heartbeat series and their beats; a re-sent series updates (keeping its id) and replaces its beats. */
export const heartbeatSeriesProjection = defineRecordsProjection<HeartbeatSeriesRecord>({
  name: 'heartbeat_series',
  eventType: 'heartbeat_series.ingested',
  collections: [
    {
      name: 'heartbeat_series',
      columns: RECORD_COLUMNS,
      booleans: RECORD_BOOLEANS,
      indexes: [
        // HRV list by first beat.
        { fields: [['user_id', 1], ['first_beat', 1], ['id', 1]] },
        // A series by its integer id (series_id filters).
        { fields: [['user_id', 1], ['id', 1]] },
        { fields: [['user_id', 1], ['day', 1]] },
      ],
    },
    {
      name: 'rr_intervals',
      indexes: [
        { fields: [['user_id', 1], ['timestamp', 1], ['_id', 1]] },
        { fields: [['user_id', 1], ['series_key', 1], ['timestamp', 1], ['_id', 1]] },
      ],
    },
  ],
  evolve: (event, sequence) => {
    const d = event.data;
    const changes: Change[] = [];
    d.records.forEach((r, i) => {
      const { kind: _kind, beats, ...fields } = r;
      const ordered = orderedBeats(beats);
      const rr = rrIntervalsMs(ordered);
      const firstBeat = ordered.length ? plusSeconds(r.start_date, ordered[0]!.offset_s) : r.start_date;
      const series = recordUpsert(event, sequence, 'heartbeat_series', i, { ...fields, first_beat: firstBeat, beats: ordered.length, ...hrvFigures(rr) }, utcDay(r.start_date));
      const key = series.id;
      changes.push(series);
      changes.push({ op: 'deleteMany', collection: 'rr_intervals', filter: { user_id: d.user_id, series_key: key } });
      ordered.forEach((b, j) => {
        const timestamp = plusSeconds(r.start_date, b.offset_s);
        const doc: RrIntervalDoc = {
          _id: childKey(key, j),
          series_key: key,
          timestamp,
          rr_ms: rr[j] ?? null,
          preceded_by_gap: b.preceded_by_gap,
          provider: r.provider,
          source: r.source,
          device: r.device,
          ...ownedFields(d, utcDay(timestamp)),
        };
        changes.push({ op: 'put', collection: 'rr_intervals', doc });
      });
    });
    return changes;
  },
});
