import type { EtlTally } from '../../../commands/ingestion/finishEtlJob.js';
import type { ImportProgress } from '../../../commands/ingestion/ingestedEvents.js';
import type { EventStore, RecordedEvent } from '../../eventstore/eventStore.js';

/** The running tallies of an ETL run, as a checkpoint stores them. */
export type RunTally = {
  items: number;
  records: Record<string, number>;
  rejected: number;
  unchanged: number;
  types: Set<string>;
  firstDay: string | null;
  lastDay: string | null;
};

export function tallyFrom(p: ImportProgress['data'] | undefined): RunTally {
  return {
    items: p?.items ?? 0,
    records: { ...(p?.records ?? {}) },
    rejected: p?.rejected ?? 0,
    unchanged: p?.unchanged ?? 0,
    types: new Set(p?.types ?? []),
    firstDay: p?.first_day ?? null,
    lastDay: p?.last_day ?? null,
  };
}

/** The tallies an outcome records (finishEtlJob.ts), from a run's. */
export function etlTallyOf(t: RunTally): EtlTally {
  return { records: t.records, rejected: t.rejected, unchanged: t.unchanged, types: [...t.types].sort(), firstDay: t.firstDay, lastDay: t.lastDay };
}

/** Events read back per step while looking for the last checkpoint. */
const PAGE = 64;

/**
 * The job's latest checkpoint on its ingest stream, or null (a first run, or one that crashed
 * before its first checkpoint). Read backwards: the checkpoint is among the last few events.
 */
export async function lastCheckpoint(eventStore: EventStore, stream: string): Promise<RecordedEvent<ImportProgress> | null> {
  let from: number | undefined;
  for (;;) {
    const page = await eventStore.readStream(stream, { direction: 'backwards', maxCount: PAGE, ...(from !== undefined ? { fromRevision: from } : {}) });
    const found = page.find((e) => e.type === 'import.progress');
    if (found) return found as RecordedEvent<ImportProgress>;
    const oldest = page.at(-1);
    if (page.length < PAGE || !oldest || oldest.streamRevision === 0) return null;
    from = oldest.streamRevision - 1;
  }
}

