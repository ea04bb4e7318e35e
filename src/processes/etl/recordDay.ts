import type { NormalizedRecord } from '../../../commands/ingestion/records.js';

/** The UTC calendar day a record counts for in coverage and data.written. */
export function recordDay(r: NormalizedRecord): string | null {
  switch (r.kind) {
    case 'sleep_session':
      return r.bedtime_start.slice(0, 10);
    case 'daily_summary':
      return r.date;
    default:
      return r.start_date.slice(0, 10);
  }
}
