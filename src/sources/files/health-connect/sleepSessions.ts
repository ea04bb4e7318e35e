import type Database from 'better-sqlite3';
import type { ParseItem } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { sleepSessionFromStages, type StagedInterval } from '../device-b/sleepStages.js';
import { STAGE_BY_INT } from '../device-b/vocabulary.js';
import { rejectedItem } from '../exportShared/unreadableExport.js';
import { parentsWithChildren } from './childRows.js';
import { epochMs, intervalTimes, location, recordId, rowExcerpt, rowMetadata, text, zoneMetadata, type Origins, type TableInfo } from './exportRows.js';
import { TIME_COLUMNS } from './scalarRecords.js';

/**
 * Sleep sessions (`sleep_session_record_table`, `title`, `notes`) with their stages
 * (`sleep_stages_table`: `stage_start_time`, `stage_end_time`, `stage_type`). The stage ints are
 * the platform's SleepSessionRecord.StageType, the same values device-b reads, so its table gives
 * the phases; the totals follow device-b's rule (a session without stages is asleep as a whole).
 * A stage that cannot be read, or lies outside its session, is rejected alone.
 */

const MAX_STAGES_PER_SESSION = 20_000;

export function* readSleepSessions(db: Database.Database, sessions: TableInfo, stages: TableInfo | undefined, origins: Origins): Generator<ParseItem> {
  const stageTable = stages?.name ?? 'sleep_stages_table';
  const childColumns = ['stage_start_time', 'stage_end_time', 'stage_type'];
  for (const { parent: row, children, dropped } of parentsWithChildren(db, sessions, [...TIME_COLUMNS.interval, 'title', 'notes'], stages, childColumns, MAX_STAGES_PER_SESSION)) {
    const out: ParseItem[] = [];
    try {
      const id = recordId(row);
      const origin = origins.of(row.app_info_id, row.device_info_id);
      const t = intervalTimes(row, true);
      const staged: StagedInterval[] = [];
      for (const s of children) {
        try {
          const start = epochMs(s.stage_start_time, 'stage_start_time');
          const end = epochMs(s.stage_end_time, 'stage_end_time');
          if (end <= start) throw new RecordError('stage_end_time is not after stage_start_time');
          if (start < t.start || end > t.end) throw new RecordError('the stage lies outside its session');
          const stage = typeof s.stage_type === 'number' ? STAGE_BY_INT.get(s.stage_type) : undefined;
          if (!stage) throw new RecordError(`stage_type ${JSON.stringify(s.stage_type)} is not a known stage`);
          staged.push({ stage, start, end });
        } catch (err) {
          if (!(err instanceof RecordError)) throw err;
          out.push(rejectedItem(`${stageTable}:rowid ${String(s.rowid)}`, `sleep stage of ${id}: ${err.message}`, JSON.stringify(s)));
        }
      }
      if (dropped > 0) out.push(rejectedItem(location(sessions, row), `sleep session ${id}: ${dropped} stages beyond the first ${MAX_STAGES_PER_SESSION} were not read`, rowExcerpt(row)));
      const metadata = { ...rowMetadata(sessions, row, id, origin), title: text(row.title), notes: text(row.notes), ...zoneMetadata(t) };
      const record = sleepSessionFromStages({ provenance: origin.provenance, id, start: t.start, end: t.end, metadata }, staged);
      out.push({ record });
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      out.push(rejectedItem(location(sessions, row), `sleep session: ${err.message}`, rowExcerpt(row)));
    }
    yield* out;
  }
}
