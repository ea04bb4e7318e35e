import type { DailySummaryRecord, ParseItem } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { rejectedItem } from '../exportShared/unreadableExport.js';
import type { ArchiveEntry, ZipArchive } from '../exportShared/zipArchive.js';
import { cell, isRow, requiredCell, rowCommon, rowExcerpt, rowLocation, samsungRows } from './samsungFiles.js';
import type { Devices } from './samsungDevices.js';

/**
 * Daily step totals: `com.samsung.shealth.step_daily_trend` and the older
 * `com.samsung.shealth.tracker.pedometer_day_summary`. Both hold a row per day and device, plus a
 * row that combines every device (step_daily_trend marks it `source_type` -2; it is never below a
 * single device's count), sometimes twice. A day is one daily summary, as the app shows it: the
 * combined row when there is one, else the device row with the most steps; the other rows are the
 * same steps counted again and are left out. `day_time` is the local day's date as UTC midnight.
 */

export const DAILY_STEP_TYPES: ReadonlySet<string> = new Set(['com.samsung.shealth.step_daily_trend', 'com.samsung.shealth.tracker.pedometer_day_summary']);
const ALL_SOURCES = -2;
/** Days kept until the files are read (270 years). */
const MAX_DAYS = 100_000;

type Day = { steps: number; combined: boolean; record: DailySummaryRecord };

export async function* dailySteps(archive: ZipArchive, entries: readonly { entry: ArchiveEntry; dataType: string }[], provider: string, devices: Devices): AsyncGenerator<ParseItem> {
  const days = new Map<string, Day>();
  for (const { entry, dataType } of entries) {
    for await (const item of samsungRows(archive, entry)) {
      if (!isRow(item)) {
        yield item;
        continue;
      }
      const { values, line } = item;
      try {
        const c = rowCommon(values, dataType, provider, devices);
        const dayTime = requiredCell(values.day_time, 'day_time', { min: 0, max: 8.64e15 });
        const date = new Date(dayTime).toISOString().slice(0, 10);
        const steps = requiredCell(values.count ?? values.step_count, values.count !== undefined ? 'count' : 'step_count', { min: 0, max: 1_000_000 });
        const sourceType = cell(values.source_type, 'source_type');
        const combined = sourceType === ALL_SOURCES || (dataType.endsWith('pedometer_day_summary') && values.source_info !== undefined);
        const known = days.get(date);
        // A combined row replaces anything (a later copy of it too); a device row only a smaller device row.
        const better = !known || combined || (!known.combined && steps > known.steps);
        if (!better) continue;
        if (!known && days.size >= MAX_DAYS) throw new RecordError(`more than ${MAX_DAYS} days of step totals`);
        const distance = cell(values.distance, 'distance', { min: 0 });
        days.set(date, {
          steps,
          combined,
          record: {
            kind: 'daily_summary',
            ...c.provenance,
            external_id: `steps_daily:${date}`,
            date,
            steps,
            active_energy_kcal: null,
            distance_m: distance === null ? null : Math.round(distance * 10) / 10,
            resting_heart_rate: null,
            avg_heart_rate: null,
            sleep_seconds: null,
            metadata: { ...c.metadata, source_type: sourceType, combined, calorie: cell(values.calorie, 'calorie', { min: 0 }), active_time_ms: cell(values.active_time, 'active_time', { min: 0 }) },
          },
        });
      } catch (err) {
        if (!(err instanceof RecordError)) throw err;
        yield rejectedItem(rowLocation(entry, line), err.message, rowExcerpt(values));
      }
    }
  }
  for (const date of [...days.keys()].sort()) yield { record: days.get(date)!.record };
}
