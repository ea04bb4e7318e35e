import type Database from 'better-sqlite3';
import type { ParseItem, RoutePoint, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { rejectedItem } from '../exportShared/unreadableExport.js';
import { quoteIdentifier } from '../exportShared/untrustedSqlite.js';
import { parentsWithChildren } from './childRows.js';
import { epochMs, intervalTimes, iso, isInt, location, recordId, rowExcerpt, rowMetadata, text, zoneMetadata, type Origins, type Row, type TableInfo } from './exportRows.js';
import { TIME_COLUMNS } from './scalarRecords.js';
import { platformExercise } from './vocabulary.js';
import { WorkoutSummaries, type SessionSpan } from './workoutSummaries.js';

/**
 * Exercise sessions (`exercise_session_record_table`: `exercise_type`, `title`, `notes`,
 * `has_route`) with their route (`exercise_route_table`: `timestamp_millis`, `latitude`,
 * `longitude`, `altitude`, `horizontal_accuracy`, `vertical_accuracy`). The totals come from
 * other records of the same app (workoutSummaries.ts), so the sessions are read twice: their
 * spans first, before the other tables, and the workouts themselves last.
 */

/** Workouts whose totals are gathered; later ones are still imported, without totals. */
const MAX_SUMMARISED_WORKOUTS = 100_000;
const MAX_ROUTE_POINTS = 500_000;

export function workoutSpans(db: Database.Database, sessions: TableInfo | undefined, origins: Origins): WorkoutSummaries {
  if (!sessions || !['row_id', 'start_time', 'end_time'].every((c) => sessions.columns.has(c))) return new WorkoutSummaries([]);
  const app = sessions.columns.has('app_info_id') ? 'app_info_id' : 'NULL AS app_info_id';
  const spans: SessionSpan[] = [];
  const sql = `SELECT row_id, ${app}, start_time, end_time FROM ${quoteIdentifier(sessions.name)} ORDER BY row_id LIMIT ${MAX_SUMMARISED_WORKOUTS}`;
  for (const r of db.prepare(sql).iterate() as Iterable<Row>) {
    if (!isInt(r.row_id) || !isInt(r.start_time) || !isInt(r.end_time) || r.end_time <= r.start_time) continue;
    spans.push({ rowId: r.row_id, pkg: origins.of(r.app_info_id, null).packageName ?? '', start: r.start_time, end: r.end_time });
  }
  return new WorkoutSummaries(spans);
}

export function* readExerciseSessions(db: Database.Database, sessions: TableInfo, route: TableInfo | undefined, origins: Origins, summaries: WorkoutSummaries): Generator<ParseItem> {
  const routeTable = route?.name ?? 'exercise_route_table';
  const childColumns = ['timestamp_millis', 'latitude', 'longitude', 'altitude', 'horizontal_accuracy'];
  const columns = [...TIME_COLUMNS.interval, 'exercise_type', 'title', 'notes', 'has_route'];
  for (const { parent: row, children, dropped } of parentsWithChildren(db, sessions, columns, route, childColumns, MAX_ROUTE_POINTS)) {
    const out: ParseItem[] = [];
    try {
      const id = recordId(row);
      const origin = origins.of(row.app_info_id, row.device_info_id);
      const t = intervalTimes(row, true);
      const exercise = platformExercise(row.exercise_type);
      const points: (RoutePoint & { t: number })[] = [];
      for (const p of children) {
        try {
          points.push(routePoint(p));
        } catch (err) {
          if (!(err instanceof RecordError)) throw err;
          out.push(rejectedItem(`${routeTable}:rowid ${String(p.rowid)}`, `route point of ${id}: ${err.message}`, JSON.stringify(p)));
        }
      }
      if (dropped > 0) out.push(rejectedItem(location(sessions, row), `exercise ${id}: ${dropped} route points beyond the first ${MAX_ROUTE_POINTS} were not read`, rowExcerpt(row)));
      points.sort((a, b) => a.t - b.t);
      const s = summaries.of(row.row_id as number);
      const record: WorkoutRecord = {
        kind: 'workout',
        ...origin.provenance,
        external_id: id,
        type: exercise.activity,
        start_date: iso(t.start),
        end_date: iso(t.end),
        duration_s: (t.end - t.start) / 1000,
        active_energy_kcal: s?.energy ?? null,
        distance_m: s?.distance ?? null,
        avg_heart_rate: s && s.hrN > 0 ? Math.round((s.hrSum / s.hrN) * 10) / 10 : null,
        max_heart_rate: s && s.hrN > 0 ? s.hrMax : null,
        steps: s?.steps ?? null,
        route: points.map(({ t: _t, ...p }) => p),
        metadata: {
          ...rowMetadata(sessions, row, id, origin),
          exercise_type: exercise.code,
          ...(exercise.name ? { exercise_type_name: exercise.name } : {}),
          title: text(row.title),
          notes: text(row.notes),
          has_route: row.has_route === 1,
          ...zoneMetadata(t),
        },
      };
      out.push({ record });
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      out.push(rejectedItem(location(sessions, row), `exercise session: ${err.message}`, rowExcerpt(row)));
    }
    yield* out;
  }
}

function routePoint(p: Row): RoutePoint & { t: number } {
  const t = epochMs(p.timestamp_millis, 'timestamp_millis');
  const lat = p.latitude;
  const lon = p.longitude;
  if (typeof lat !== 'number' || !Number.isFinite(lat) || lat < -90 || lat > 90) throw new RecordError(`latitude ${String(lat)} is outside -90..90`);
  if (typeof lon !== 'number' || !Number.isFinite(lon) || lon < -180 || lon > 180) throw new RecordError(`longitude ${String(lon)} is outside -180..180`);
  const metres = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return { timestamp: iso(t), latitude: lat, longitude: lon, altitude_m: metres(p.altitude), speed_mps: null, course_deg: null, horizontal_accuracy_m: metres(p.horizontal_accuracy), t };
}
