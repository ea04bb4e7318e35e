import type Database from 'better-sqlite3';
import type { ParseContext, ParseItem } from '../../../../commands/ingestion/records.js';
import { UnreadableExportError } from '../exportShared/unreadableExport.js';
import { readExerciseSessions, workoutSpans } from './exerciseSessions.js';
import { Origins, readTables } from './exportRows.js';
import { readHeartRate } from './heartRateSeries.js';
import { readBloodPressure, readMenstruationFlow, readNutrition } from './otherRecords.js';
import { readScalarTable } from './scalarRecords.js';
import { readSleepSessions } from './sleepSessions.js';
import { SCALAR_TABLES } from './vocabulary.js';

/**
 * Reads an opened Health Connect database in a fixed order (the same file always yields the same
 * sequence): workout spans first (kept for their totals), then the one-value tables, heart rate,
 * blood pressure, nutrition, menstrual flow, sleep sessions, and the workouts last. Tables the
 * file lacks are skipped; a file with none of Health Connect's record tables is not its export.
 */
export function* readExportDatabase(db: Database.Database, ctx: ParseContext): Generator<ParseItem> {
  const tables = readTables(db);
  const known = ['application_info_table', 'heart_rate_record_table', 'sleep_session_record_table', 'exercise_session_record_table', ...SCALAR_TABLES.map((t) => t.table)];
  if (!known.some((name) => tables.has(name))) {
    const names = [...tables.values()].map((t) => t.name).sort();
    throw new UnreadableExportError('database', `not Health Connect's database: none of its tables (application_info_table, steps_record_table, heart_rate_record_table, …) is there; it holds ${names.slice(0, 12).join(', ') || 'no tables'}${names.length > 12 ? ', …' : ''}`);
  }
  const origins = new Origins(db, tables, ctx.provider);
  const sessions = tables.get('exercise_session_record_table');
  const summaries = workoutSpans(db, sessions, origins);

  for (const spec of SCALAR_TABLES) {
    const table = tables.get(spec.table);
    if (table) yield* readScalarTable(db, table, spec, origins, summaries);
  }
  const heartRate = tables.get('heart_rate_record_table');
  if (heartRate) yield* readHeartRate(db, heartRate, tables.get('heart_rate_record_series_table'), origins, summaries);
  const bloodPressure = tables.get('blood_pressure_record_table');
  if (bloodPressure) yield* readBloodPressure(db, bloodPressure, origins);
  const nutrition = tables.get('nutrition_record_table');
  if (nutrition) yield* readNutrition(db, nutrition, origins);
  const flow = tables.get('menstruation_flow_record_table');
  if (flow) yield* readMenstruationFlow(db, flow, origins);
  const sleep = tables.get('sleep_session_record_table');
  if (sleep) yield* readSleepSessions(db, sleep, tables.get('sleep_stages_table'), origins);
  if (sessions) yield* readExerciseSessions(db, sessions, tables.get('exercise_route_table'), origins, summaries);
}
