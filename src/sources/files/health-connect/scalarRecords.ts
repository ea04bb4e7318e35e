import type Database from 'better-sqlite3';
import type { Metadata, ParseItem, QuantityRecord } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { catalogQuantity } from '../exportShared/catalogRecords.js';
import { rejectedItem } from '../exportShared/unreadableExport.js';
import { quoteIdentifier } from '../exportShared/untrustedSqlite.js';
import {
  COMMON_COLUMNS,
  instantTimes,
  intervalTimes,
  location,
  manual,
  recordId,
  rowExcerpt,
  rowMetadata,
  selectList,
  zoneMetadata,
  type Origin,
  type Origins,
  type Row,
  type TableInfo,
  type Times,
} from './exportRows.js';
import type { ScalarTable } from './vocabulary.js';
import type { WorkoutSummaries } from './workoutSummaries.js';

/** A quantity sample of a catalog type, converted to its storage unit; what was stored stays in metadata. */
export function quantityRecord(
  origin: Origin,
  row: Row,
  externalId: string,
  type: string,
  stored: { value: number; ucum: string },
  t: Times,
  metadata: Metadata,
): QuantityRecord {
  return catalogQuantity(origin.provenance, { ...origin.sample, was_user_entered: manual(row) }, { external_id: externalId, type, stored, start: t.start, end: t.end, metadata: { ...metadata, ...zoneMetadata(t) } });
}

export function finiteValue(v: unknown, column: string, nonNegative: boolean): number {
  if (v === null || v === undefined) throw new RecordError(`${column} is missing`);
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new RecordError(`${column} ${JSON.stringify(String(v)).slice(0, 40)} is not a number`);
  if (nonNegative && v < 0) throw new RecordError(`${column} ${v} is negative`);
  return v;
}

export const TIME_COLUMNS = {
  instant: ['time', 'zone_offset'],
  interval: ['start_time', 'start_zone_offset', 'end_time', 'end_zone_offset'],
} as const;

/** One record table of one value per row, in row order. */
export function* readScalarTable(db: Database.Database, table: TableInfo, spec: ScalarTable, origins: Origins, summaries: WorkoutSummaries): Generator<ParseItem> {
  if (!table.columns.has('row_id') || !table.columns.has(spec.column)) {
    yield rejectedItem(table.name, `the table has no ${!table.columns.has('row_id') ? 'row_id' : spec.column} column: not read`, [...table.columns].join(', '));
    return;
  }
  const columns = [...COMMON_COLUMNS, ...TIME_COLUMNS[spec.shape], spec.column];
  const rows = db.prepare(`SELECT ${selectList(table, columns)} FROM ${quoteIdentifier(table.name)} ORDER BY row_id`).iterate() as Iterable<Row>;
  for (const row of rows) {
    let item: ParseItem;
    try {
      const id = recordId(row);
      const origin = origins.of(row.app_info_id, row.device_info_id);
      const t = spec.shape === 'instant' ? instantTimes(row) : intervalTimes(row);
      const value = finiteValue(row[spec.column], spec.column, spec.nonNegative);
      const record = quantityRecord(origin, row, id, spec.type, { value, ucum: spec.ucum }, t, rowMetadata(table, row, id, origin));
      // Storage units of step_count, distance and active_energy_burned: count, m, kcal, as workouts keep them.
      if (spec.summary) summaries.add(spec.summary, origin.packageName, t.start, t.end, record.value);
      item = { record };
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      item = rejectedItem(location(table, row), `${spec.type}: ${err.message}`, rowExcerpt(row));
    }
    yield item;
  }
}

