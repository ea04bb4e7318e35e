import type Database from 'better-sqlite3';
import type { Metadata, ParseItem, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { provenance, type DeviceInfo } from './devices.js';
import { HR_MAX, HR_MIN, HR_NO_READING, MAX_STEPS_PER_SAMPLE, MAX_WORKOUT_S, MIN_EPOCH_S } from './limits.js';
import { q, type Row, type TableInfo } from './sqliteExport.js';
import { rejectRow } from './rejectedRows.js';
import { intOrNull, isInt, isoOf, isoOrRaw, round1, strOrNull } from './values.js';
import { WORKOUT_TYPES } from './vocabulary.js';

/** BASE_ACTIVITY_SUMMARY: workouts, their totals from SUMMARY_DATA or, without them, from the device's minutes. */

export function* readWorkouts(
  db: Database.Database,
  table: TableInfo,
  sampleTables: TableInfo[],
  deviceOf: (id: number) => DeviceInfo,
  provider: string,
  maxTs: number,
): Generator<ParseItem> {
  const wanted = ['_id', 'NAME', 'START_TIME', 'END_TIME', 'ACTIVITY_KIND', 'GPX_TRACK', 'RAW_DETAILS_PATH', 'DEVICE_ID', 'USER_ID', 'SUMMARY_DATA', 'BASE_LONGITUDE', 'BASE_LATITUDE', 'BASE_ALTITUDE'];
  const columns = wanted.filter((c) => table.columns.has(c));
  // Workouts are few; read them all so the fallback queries below can run (better-sqlite3
  // cannot run a statement while another one iterates). RAW_SUMMARY_DATA (a blob) is left out.
  const rows = db.prepare(`SELECT ${columns.map(q).join(', ')} FROM ${q(table.name)} ORDER BY "_id"`).all() as Row[];
  const fallbacks = sampleTables.map((t) => sampleStatsStatement(db, t));

  for (const row of rows) {
    const start = row.START_TIME;
    const end = row.END_TIME;
    let reason: string | null = null;
    if (!isInt(start) || !isInt(end)) reason = 'START_TIME and END_TIME must be integers (epoch milliseconds)';
    else if (start / 1000 < MIN_EPOCH_S || end / 1000 > maxTs) reason = `workout ${isoOrRaw(start / 1000)} .. ${isoOrRaw(end / 1000)} is outside ${isoOf(MIN_EPOCH_S)} .. one day after the upload`;
    else if (end < start) reason = `END_TIME ${end} is before START_TIME ${start}`;
    else if ((end - start) / 1000 > MAX_WORKOUT_S) reason = `workout of ${Math.round((end - start) / 86400000)} days is implausible (more than 7)`;
    else if (!isInt(row.DEVICE_ID)) reason = `DEVICE_ID ${JSON.stringify(row.DEVICE_ID)} is not an integer`;
    if (reason) {
      yield { rejected: rejectRow(table, { __rowid: row._id, ...row }, reason) };
      continue;
    }
    const startMs = start as number;
    const endMs = end as number;
    const device = deviceOf(row.DEVICE_ID as number);
    const kindCode = intOrNull(row.ACTIVITY_KIND);
    const kind = kindCode === null ? undefined : WORKOUT_TYPES.get(kindCode);

    let summaryData: Record<string, unknown> | null = null;
    let summaryError: string | null = null;
    if (typeof row.SUMMARY_DATA === 'string' && row.SUMMARY_DATA.trim()) {
      try {
        const parsed: unknown = JSON.parse(row.SUMMARY_DATA);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) summaryData = parsed as Record<string, unknown>;
        else summaryError = 'SUMMARY_DATA is not a JSON object';
      } catch {
        summaryError = 'SUMMARY_DATA is not valid JSON';
      }
    }

    let distance = summaryValue(summaryData, 'distanceMeters', { meters: 1, m: 1, km: 1000, cm: 0.01 });
    let energy = summaryValue(summaryData, 'caloriesBurnt', { calories_unit: 1, kcal: 1, unit_joule: 1 / 4184 });
    let avgHr = summaryValue(summaryData, 'averageHR', { bpm: 1 });
    let maxHr = summaryValue(summaryData, 'maxHR', { bpm: 1 });
    let steps = summaryValue(summaryData, 'steps', { steps_unit: 1 });
    const derived: string[] = [];
    if (avgHr === null || maxHr === null || steps === null) {
      const stats = sampleStats(fallbacks, device.id, Math.floor(startMs / 1000), Math.ceil(endMs / 1000));
      if (stats) {
        if (steps === null) {
          steps = stats.steps;
          derived.push('steps');
        }
        if (avgHr === null && stats.avgHr !== null) {
          avgHr = round1(stats.avgHr);
          derived.push('avg_heart_rate');
        }
        if (maxHr === null && stats.maxHr !== null) {
          maxHr = stats.maxHr;
          derived.push('max_heart_rate');
        }
      }
    }
    if (distance !== null) distance = round1(distance);
    if (energy !== null) energy = round1(energy);

    const metadata: Metadata = {
      timezone: null,
      table: table.name,
      gadgetbridge_id: row._id,
      name: strOrNull(row.NAME),
      activity_kind: kindCode,
      activity_kind_name: kind?.[0] ?? null,
      gpx_track: strOrNull(row.GPX_TRACK),
      raw_details_path: strOrNull(row.RAW_DETAILS_PATH),
      active_seconds: summaryValue(summaryData, 'activeSeconds', { seconds: 1 }),
      summary_data: summaryData,
      gadgetbridge_device_id: device.id,
      gadgetbridge_user_id: intOrNull(row.USER_ID),
    };
    if (summaryError) metadata.summary_data_error = summaryError;
    if (derived.length) metadata.derived_from_samples = derived;

    const workout: WorkoutRecord = {
      ...provenance(device, provider),
      kind: 'workout',
      // Not the local _id: a reinstalled Gadgetbridge numbers its workouts again from 1.
      external_id: `workout:${device.identifier}:${startMs}`,
      type: kind?.[1] ?? 'other',
      start_date: new Date(startMs).toISOString(),
      end_date: new Date(endMs).toISOString(),
      duration_s: (endMs - startMs) / 1000,
      active_energy_kcal: energy,
      distance_m: distance,
      avg_heart_rate: avgHr,
      max_heart_rate: maxHr,
      steps,
      // GPX_TRACK names a file on the phone; the database export does not contain it.
      route: [],
      metadata,
    };
    yield { record: workout };
  }
}

/** A SUMMARY_DATA entry: `{"value": 5230, "unit": "meters"}` (or a bare number), converted. */
export function summaryValue(data: Record<string, unknown> | null, key: string, units: Record<string, number>): number | null {
  // Own properties only: a stranger's summary may name keys like "constructor".
  const entry = data && Object.hasOwn(data, key) ? data[key] : undefined;
  let value: unknown = entry;
  let unit: unknown;
  if (entry && typeof entry === 'object') {
    value = (entry as Record<string, unknown>).value;
    unit = (entry as Record<string, unknown>).unit;
  }
  if (typeof value === 'string' && value.trim() !== '') value = Number(value);
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return null;
  if (typeof unit === 'string' && unit !== '') {
    const factor = Object.hasOwn(units, unit) ? units[unit] : undefined;
    return typeof factor === 'number' ? value * factor : null;
  }
  return value;
}

type Stats = { n: number; steps: number; avgHr: number | null; maxHr: number | null };

function sampleStatsStatement(db: Database.Database, table: TableInfo) {
  const hr = table.columns.has('HEART_RATE');
  const validHr = `"HEART_RATE" BETWEEN ${HR_MIN} AND ${HR_MAX} AND "HEART_RATE" NOT IN (${[...HR_NO_READING].join(', ')})`;
  return db.prepare(
    `SELECT count(*) AS n,
            coalesce(sum(CASE WHEN "STEPS" > 0 AND "STEPS" <= ${MAX_STEPS_PER_SAMPLE} THEN "STEPS" END), 0) AS steps,
            ${hr ? `avg(CASE WHEN ${validHr} THEN "HEART_RATE" END)` : 'NULL'} AS avgHr,
            ${hr ? `max(CASE WHEN ${validHr} THEN "HEART_RATE" END)` : 'NULL'} AS maxHr
       FROM ${q(table.name)} WHERE "DEVICE_ID" = ? AND "TIMESTAMP" >= ? AND "TIMESTAMP" < ?`,
  );
}

/** Steps and heart rate of the device's minutes during a workout without them in SUMMARY_DATA. */
function sampleStats(statements: Database.Statement[], deviceId: number, start: number, end: number): Stats | null {
  for (const stmt of statements) {
    const stats = stmt.get(deviceId, start, end) as Stats;
    if (stats.n > 0) return stats;
  }
  return null;
}

