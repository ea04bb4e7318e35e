import type Database from 'better-sqlite3';
import type { ParseItem } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { rejectedItem } from '../exportShared/unreadableExport.js';
import { parentsWithChildren } from './childRows.js';
import { epochMs, intervalTimes, location, recordId, rowExcerpt, rowMetadata, type Origins, type TableInfo } from './exportRows.js';
import { finiteValue, quantityRecord, TIME_COLUMNS } from './scalarRecords.js';
import type { WorkoutSummaries } from './workoutSummaries.js';

/**
 * Heart rate: a record per series (`heart_rate_record_table`) holding its samples
 * (`heart_rate_record_series_table`: `beats_per_minute`, `epoch_millis`, `parent_key`). Each
 * sample is a `heart_rate` sample at its instant, `external_id` = `<record uuid>:<i>` with i its
 * position in the series as written (device-b numbers the JSON upload's samples the same way).
 */

/** Samples of one series kept at most (a day at one per second is 86,400). */
export const MAX_SAMPLES_PER_SERIES = 500_000;

export function* readHeartRate(db: Database.Database, parent: TableInfo, samples: TableInfo | undefined, origins: Origins, summaries: WorkoutSummaries): Generator<ParseItem> {
  const seriesName = samples?.name ?? 'heart_rate_record_series_table';
  for (const { parent: row, children, dropped } of parentsWithChildren(db, parent, TIME_COLUMNS.interval, samples, ['beats_per_minute', 'epoch_millis'], MAX_SAMPLES_PER_SERIES)) {
    let head;
    try {
      const id = recordId(row);
      const origin = origins.of(row.app_info_id, row.device_info_id);
      const t = intervalTimes(row);
      head = { id, origin, t, metadata: rowMetadata(parent, row, id, origin) };
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      yield rejectedItem(location(parent, row), `heart_rate: ${err.message} (${children.length + dropped} samples not read)`, rowExcerpt(row));
      continue;
    }
    for (let i = 0; i < children.length; i++) {
      const s = children[i]!;
      let item: ParseItem;
      try {
        const at = epochMs(s.epoch_millis, 'epoch_millis');
        const bpm = finiteValue(s.beats_per_minute, 'beats_per_minute', true);
        const record = quantityRecord(head.origin, row, `${head.id}:${i}`, 'heart_rate', { value: bpm, ucum: '/min' }, { start: at, end: at, zone: head.t.zone, endZone: head.t.zone }, head.metadata);
        summaries.addHeartRate(head.origin.packageName, at, record.value);
        item = { record };
      } catch (err) {
        if (!(err instanceof RecordError)) throw err;
        item = rejectedItem(`${seriesName}:rowid ${String(s.rowid)}`, `heart_rate sample ${i} of ${head.id}: ${err.message}`, JSON.stringify(s));
      }
      yield item;
    }
    if (dropped > 0) yield rejectedItem(location(parent, row), `heart_rate ${head.id}: ${dropped} samples beyond the first ${MAX_SAMPLES_PER_SERIES} of one series were not read`, rowExcerpt(row));
  }
}
