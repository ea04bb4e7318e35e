import { INGESTED_EVENT, BATCH_SIZE, type DeviceParser, type NormalizedRecord, type RecordKind, type RejectedItem } from '../../commands/ingestion/records.js';
import { ingestStream, type RecordsRejected } from '../../commands/ingestion/ingestedEvents.js';
import type { EtlOutcome } from '../../commands/ingestion/finishEtlJob.js';
import type { UploadAccepted } from '../../commands/ingestion/upload.js';
import type { EventStore } from '../eventstore/eventStore.js';
import type { RawStore } from '../rawstore/rawStore.js';
import { deterministicId } from '../shared/ids.js';
import { sha256Hex } from '../shared/secrets.js';

/**
 * Normalises one stored payload into record events. Batches are cut deterministically and get
 * ids derived from the job, kind and batch number, so a run repeated after a crash appends
 * nothing that an earlier run already stored: each record is written exactly once.
 */
export async function runEtlJob(
  eventStore: EventStore,
  rawStore: RawStore,
  parser: DeviceParser,
  jobStream: string,
  upload: UploadAccepted['data'],
  /** Checked before each batch: true stops the run (its user is being deleted). */
  cancelled: () => Promise<boolean> = async () => false,
): Promise<Extract<EtlOutcome, { kind: 'succeeded' }>> {
  const payload = await rawStore.get(upload.object_key);
  const stream = ingestStream(upload.user_id, jobStream);
  const base = { job: jobStream, user_id: upload.user_id, tenant_id: upload.tenant_id, provider: upload.provider, ingested_at: upload.accepted_at };
  const pending = new Map<RecordKind, NormalizedRecord[]>();
  const batchNo = new Map<string, number>();
  const counts: Record<string, number> = {};
  const types = new Set<string>();
  let firstDay: string | null = null;
  let lastDay: string | null = null;
  let rejected: (RejectedItem & { key: string })[] = [];
  let rejectedCount = 0;

  const nextBatch = (kind: string) => {
    const n = batchNo.get(kind) ?? 0;
    batchNo.set(kind, n + 1);
    return n;
  };
  const flush = async (kind: RecordKind) => {
    const records = pending.get(kind);
    if (!records?.length) return;
    if (await cancelled()) throw new EtlCancelledError();
    pending.set(kind, []);
    const batch = nextBatch(kind);
    await eventStore.appendToStream(stream, [
      { id: deterministicId(jobStream, kind, String(batch)), type: INGESTED_EVENT[kind], data: { ...base, batch, records } },
    ]);
  };
  const flushRejected = async () => {
    if (!rejected.length) return;
    const items = rejected;
    rejected = [];
    const batch = nextBatch('rejected');
    const event: RecordsRejected = {
      type: 'records.rejected',
      data: { ...base, batch, items, at: upload.accepted_at },
    };
    await eventStore.appendToStream(stream, [{ ...event, id: deterministicId(jobStream, 'rejected', String(batch)) }]);
  };

  for await (const item of parser.parse(payload, { provider: upload.provider, receivedAt: upload.accepted_at })) {
    if ('rejected' in item) {
      // Keyed by content: the same bad line sent again is still one rejected record.
      rejected.push({ ...item.rejected, key: sha256Hex(`${upload.provider}\u0000${item.rejected.reason}\u0000${item.rejected.excerpt}`) });
      rejectedCount++;
      if (rejected.length >= 1000) await flushRejected();
      continue;
    }
    const r = item.record;
    let list = pending.get(r.kind);
    if (!list) pending.set(r.kind, (list = []));
    list.push(r);
    counts[r.kind] = (counts[r.kind] ?? 0) + 1;
    types.add(r.kind === 'quantity' || r.kind === 'category' ? r.type : r.kind);
    const day = recordDay(r);
    if (day) {
      if (!firstDay || day < firstDay) firstDay = day;
      if (!lastDay || day > lastDay) lastDay = day;
    }
    if (list.length >= BATCH_SIZE[r.kind]) await flush(r.kind);
  }
  for (const kind of pending.keys()) await flush(kind);
  await flushRejected();
  return { kind: 'succeeded', records: counts, rejected: rejectedCount, types: [...types].sort(), firstDay, lastDay };
}

export class EtlCancelledError extends Error {
  override name = 'EtlCancelledError';
  constructor() {
    super('the user is being deleted');
  }
}

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
