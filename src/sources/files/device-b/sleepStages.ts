import type { Metadata, Provenance, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { NO_NIGHT_VITALS } from '../../derivations/sleepSessions.js';
import { iso } from './healthConnectTimes.js';
import type { Stage, StageKind } from './vocabulary.js';

/** One stage of a session, already read and checked to lie inside it (times in epoch ms). */
export type StagedInterval = { stage: Stage; start: number; end: number };

/**
 * A Health Connect sleep session from its stages, as device-b's upload and the Health Connect
 * export both hold them (the platform's SleepSessionRecord.StageType): the stages' seconds are
 * summed by kind and become the phases in time order. A session without stages is, for Health
 * Connect, time asleep as a whole.
 */
export function sleepSessionFromStages(
  session: { provenance: Provenance; id: string; start: number; end: number; metadata: Metadata },
  stages: readonly StagedInterval[],
): SleepSessionRecord {
  const seconds: Record<StageKind, number> = { unknown: 0, awake: 0, sleeping: 0, out_of_bed: 0, light: 0, deep: 0, rem: 0, awake_in_bed: 0 };
  for (const s of stages) seconds[s.stage.kind] += (s.end - s.start) / 1000;
  const phases = [...stages].sort((a, b) => a.start - b.start).map((s) => ({ phase: s.stage.phase, start_date: iso(s.start), end_date: iso(s.end) }));
  const staged = stages.length > 0;
  return {
    kind: 'sleep_session',
    ...session.provenance,
    external_id: session.id,
    bedtime_start: iso(session.start),
    bedtime_end: iso(session.end),
    total_sleep_seconds: Math.round(staged ? seconds.sleeping + seconds.light + seconds.deep + seconds.rem : (session.end - session.start) / 1000),
    deep_sleep_seconds: Math.round(seconds.deep),
    rem_sleep_seconds: Math.round(seconds.rem),
    light_sleep_seconds: Math.round(seconds.light),
    awake_seconds: Math.round(seconds.awake + seconds.out_of_bed + seconds.awake_in_bed),
    ...NO_NIGHT_VITALS,
    phases,
    metadata: session.metadata,
  };
}
