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

/**
 * Where a run starts: the job's latest checkpoint, with the items to run over. A checkpoint is
 * written only once a run has passed `every` items (runEtlJob.ts), and every run of a job yields
 * the same items in the same order: a payload that yields fewer has no checkpoint to resume from,
 * whichever runs came before. So up to `every` items are taken first, and the checkpoint is read
 * only when there are more (issue 37: a small job reads nothing). What the parser throws among
 * those first items is thrown again after them, where the run would have met it.
 */
export async function resumePoint<T>(
  eventStore: EventStore,
  stream: string,
  items: AsyncIterable<T>,
  every: number,
): Promise<{ resumed: RecordedEvent<ImportProgress> | null; items: AsyncIterable<T> }> {
  const it = items[Symbol.asyncIterator]();
  const first: T[] = [];
  let ended = false;
  let failure: { err: unknown } | null = null;
  try {
    while (first.length < every) {
      const next = await it.next();
      if (next.done) {
        ended = true;
        break;
      }
      first.push(next.value);
    }
  } catch (err) {
    failure = { err };
  }
  const resumed = ended || failure ? null : await lastCheckpoint(eventStore, stream);
  const rest = async function* () {
    yield* first;
    if (failure) throw failure.err;
    if (ended) return;
    for (;;) {
      const next = await it.next();
      if (next.done) return;
      yield next.value;
    }
  };
  return { resumed, items: rest() };
}
