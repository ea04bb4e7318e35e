import type { NormalizedRecord, ParseItem, SleepPhase, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { rejectedItem } from '../exportShared/unreadableExport.js';
import type { ArchiveEntry, ZipArchive } from '../exportShared/zipArchive.js';
import { rowTimes, samsungQuantity } from './measurements.js';
import { cell, isRow, rowCommon, rowExcerpt, rowLocation, samsungRows, type SamsungRow } from './samsungFiles.js';
import type { Devices } from './samsungDevices.js';
import { SLEEP_STAGES } from './vocabulary.js';

/**
 * Sleep sessions (`com.samsung.shealth.sleep`) and their stages (`com.samsung.health.sleep_stage`,
 * `sleep_id` naming the session's `datauuid`). The stage file is large and in no useful order, so
 * the join runs in batches at bounded memory: sessions are read a batch at a time and the stage
 * files are read once per batch, keeping only that batch's stages. The first stage pass also
 * reports the stage rows that cannot be read or belong to no session of the export.
 * `sleep_combined` (a merge of sessions already in the sleep file) is not read.
 */

export const SLEEP_TYPES: ReadonlySet<string> = new Set(['com.samsung.shealth.sleep', 'com.samsung.health.sleep']);
export const SLEEP_STAGE_TYPES: ReadonlySet<string> = new Set(['com.samsung.health.sleep_stage', 'com.samsung.shealth.sleep_stage']);

const BATCH = 2_000;
const MAX_STAGES_PER_SESSION = 5_000;
/** Session ids remembered to recognise stages of no session (more is not a person's history). */
const MAX_SESSION_IDS = 1_000_000;

type Files = readonly { entry: ArchiveEntry; dataType: string }[];
type Stage = { phase: SleepPhase['phase']; start: number; end: number };

export async function* sleepSessions(archive: ZipArchive, sessions: Files, stages: Files, provider: string, devices: Devices): AsyncGenerator<ParseItem> {
  const allIds = new Set<string>();
  if (stages.length) {
    for (const { entry } of sessions) {
      for await (const item of samsungRows(archive, entry)) if (isRow(item) && item.values.datauuid && allIds.size < MAX_SESSION_IDS) allIds.add(item.values.datauuid);
    }
  }
  let firstPass = true;
  const flush = async function* (batch: { entry: ArchiveEntry; dataType: string; row: SamsungRow }[]): AsyncGenerator<ParseItem> {
    const byId = new Map<string, Stage[]>();
    for (const b of batch) if (b.row.values.datauuid) byId.set(b.row.values.datauuid, []);
    if (stages.length && (byId.size || firstPass)) yield* collectStages(archive, stages, byId, firstPass ? allIds : null);
    firstPass = false;
    for (const { entry, dataType, row } of batch) {
      let records: NormalizedRecord[];
      try {
        records = session(row.values, dataType, provider, devices, byId.get(row.values.datauuid ?? '') ?? []);
      } catch (err) {
        if (!(err instanceof RecordError)) throw err;
        yield rejectedItem(rowLocation(entry, row.line), `sleep session: ${err.message}`, rowExcerpt(row.values));
        continue;
      }
      for (const record of records) yield { record };
    }
  };
  let batch: { entry: ArchiveEntry; dataType: string; row: SamsungRow }[] = [];
  for (const { entry, dataType } of sessions) {
    for await (const item of samsungRows(archive, entry)) {
      if (!isRow(item)) {
        yield item;
        continue;
      }
      batch.push({ entry, dataType, row: item });
      if (batch.length >= BATCH) {
        yield* flush(batch);
        batch = [];
      }
    }
  }
  if (batch.length || firstPass) yield* flush(batch);
}

/** One pass over the stage files: the stages of the sessions in `byId`; with `report`, the rejections too. */
async function* collectStages(archive: ZipArchive, stages: Files, byId: Map<string, Stage[]>, report: Set<string> | null): AsyncGenerator<ParseItem> {
  for (const { entry } of stages) {
    for await (const item of samsungRows(archive, entry)) {
      if (!isRow(item)) {
        if (report) yield item;
        continue;
      }
      const v = item.values;
      const list = v.sleep_id === undefined ? undefined : byId.get(v.sleep_id);
      if (!list && !report) continue;
      try {
        if (!v.sleep_id) throw new RecordError('sleep_id is missing');
        const code = cell(v.stage, 'stage');
        const phase = code === null ? undefined : SLEEP_STAGES.get(code);
        if (!phase) throw new RecordError(`stage ${JSON.stringify(v.stage)} is not a known sleep stage`);
        const { start, end } = rowTimes(v, 'interval');
        if (end <= start) throw new RecordError('end_time is not after start_time');
        if (report && !report.has(v.sleep_id)) throw new RecordError(`sleep_id ${v.sleep_id} names no sleep session of the export`);
        if (list && list.length < MAX_STAGES_PER_SESSION) list.push({ phase, start, end });
        else if (list && report) throw new RecordError(`more than ${MAX_STAGES_PER_SESSION} stages for one session`);
      } catch (err) {
        if (!(err instanceof RecordError)) throw err;
        if (report) yield rejectedItem(rowLocation(entry, item.line), `sleep stage: ${err.message}`, rowExcerpt(v));
      }
    }
  }
}

function session(v: Record<string, string | undefined>, dataType: string, provider: string, devices: Devices, stages: Stage[]): NormalizedRecord[] {
  const c = rowCommon(v, dataType, provider, devices);
  const { start, end } = rowTimes(v, 'interval');
  if (end <= start) throw new RecordError('end_time is not after start_time');
  const seconds = { deep: 0, rem: 0, light: 0, awake: 0 };
  const phases: Stage[] = [];
  for (const s of stages) {
    // A stage reaching past its session is cut to it; one wholly outside is not part of it.
    const a = Math.max(s.start, start);
    const b = Math.min(s.end, end);
    if (b <= a) continue;
    phases.push({ phase: s.phase, start: a, end: b });
    seconds[s.phase as keyof typeof seconds] += (b - a) / 1000;
  }
  phases.sort((x, y) => x.start - y.start);
  const minutes = cell(v.sleep_duration, 'sleep_duration', { min: 0 });
  const score = cell(v.sleep_score, 'sleep_score', { min: 0, max: 100 });
  const staged = phases.length > 0;
  const record: SleepSessionRecord = {
    kind: 'sleep_session',
    ...c.provenance,
    external_id: c.id,
    bedtime_start: new Date(start).toISOString(),
    bedtime_end: new Date(end).toISOString(),
    total_sleep_seconds: Math.round(staged ? seconds.light + seconds.deep + seconds.rem : minutes !== null && minutes > 0 ? minutes * 60 : (end - start) / 1000),
    deep_sleep_seconds: Math.round(seconds.deep),
    rem_sleep_seconds: Math.round(seconds.rem),
    light_sleep_seconds: Math.round(seconds.light),
    awake_seconds: Math.round(seconds.awake),
    sleep_score: score !== null && score > 0 ? score : null,
    hrv_avg_ms: null,
    resting_hr: null,
    respiratory_rate: null,
    spo2_avg: null,
    phases: phases.map((p) => ({ phase: p.phase, start_date: new Date(p.start).toISOString(), end_date: new Date(p.end).toISOString() })),
    metadata: {
      ...c.metadata,
      efficiency: cell(v.efficiency, 'efficiency'),
      sleep_duration_minutes: minutes,
      quality: cell(v.quality, 'quality'),
      mental_recovery: cell(v.mental_recovery, 'mental_recovery'),
      physical_recovery: cell(v.physical_recovery, 'physical_recovery'),
      sleep_cycle: cell(v.sleep_cycle, 'sleep_cycle'),
      stage_count: phases.length,
    },
  };
  const out: NormalizedRecord[] = [record];
  if (record.sleep_score !== null) out.push(samsungQuantity(c, `${c.id}:sleep_score`, 'sleep_score', { value: record.sleep_score, ucum: '1' }, { start: end, end }, c.metadata));
  return out;
}
