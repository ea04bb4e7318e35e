import type Database from 'better-sqlite3';
import type { ParseItem, SleepPhase, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { STAGE_BY_INT, type StageKind } from '../device-b/vocabulary.js';
import { rejectedItem } from '../exportShared/unreadableExport.js';
import { parentsWithChildren } from './childRows.js';
import { epochMs, intervalTimes, iso, location, recordId, rowExcerpt, rowMetadata, text, zoneMetadata, type Origins, type TableInfo } from './exportRows.js';
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
      const seconds: Record<StageKind, number> = { unknown: 0, awake: 0, sleeping: 0, out_of_bed: 0, light: 0, deep: 0, rem: 0, awake_in_bed: 0 };
      const phases: (SleepPhase & { t: number })[] = [];
      for (const s of children) {
        try {
          const start = epochMs(s.stage_start_time, 'stage_start_time');
          const end = epochMs(s.stage_end_time, 'stage_end_time');
          if (end <= start) throw new RecordError('stage_end_time is not after stage_start_time');
          if (start < t.start || end > t.end) throw new RecordError('the stage lies outside its session');
          const stage = typeof s.stage_type === 'number' ? STAGE_BY_INT.get(s.stage_type) : undefined;
          if (!stage) throw new RecordError(`stage_type ${JSON.stringify(s.stage_type)} is not a known stage`);
          seconds[stage.kind] += (end - start) / 1000;
          phases.push({ phase: stage.phase, start_date: iso(start), end_date: iso(end), t: start });
        } catch (err) {
          if (!(err instanceof RecordError)) throw err;
          out.push(rejectedItem(`${stageTable}:rowid ${String(s.rowid)}`, `sleep stage of ${id}: ${err.message}`, JSON.stringify(s)));
        }
      }
      if (dropped > 0) out.push(rejectedItem(location(sessions, row), `sleep session ${id}: ${dropped} stages beyond the first ${MAX_STAGES_PER_SESSION} were not read`, rowExcerpt(row)));
      phases.sort((a, b) => a.t - b.t);
      const staged = phases.length > 0;
      const record: SleepSessionRecord = {
        kind: 'sleep_session',
        ...origin.provenance,
        external_id: id,
        bedtime_start: iso(t.start),
        bedtime_end: iso(t.end),
        total_sleep_seconds: Math.round(staged ? seconds.sleeping + seconds.light + seconds.deep + seconds.rem : (t.end - t.start) / 1000),
        deep_sleep_seconds: Math.round(seconds.deep),
        rem_sleep_seconds: Math.round(seconds.rem),
        light_sleep_seconds: Math.round(seconds.light),
        awake_seconds: Math.round(seconds.awake + seconds.out_of_bed + seconds.awake_in_bed),
        sleep_score: null,
        hrv_avg_ms: null,
        resting_hr: null,
        respiratory_rate: null,
        spo2_avg: null,
        phases: phases.map(({ phase, start_date, end_date }) => ({ phase, start_date, end_date })),
        metadata: { ...rowMetadata(sessions, row, id, origin), title: text(row.title), notes: text(row.notes), ...zoneMetadata(t) },
      };
      out.push({ record });
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      out.push(rejectedItem(location(sessions, row), `sleep session: ${err.message}`, rowExcerpt(row)));
    }
    yield* out;
  }
}
