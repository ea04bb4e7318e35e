import { INGESTED_EVENT, type DeviceParser, type NormalizedRecord, type RecordKind, type RejectedItem } from '../../../commands/ingestion/records.js';
import { ingestStream, type RecordsIngested, type RecordsRejected } from '../../../commands/ingestion/ingestedEvents.js';
import type { EtlOutcome } from '../../../commands/ingestion/finishEtlJob.js';
import type { UploadAccepted } from '../../../commands/ingestion/upload.js';
import type { EventSealer } from '../../crypto/recordSealing.js';
import type { Event, EventStore, ExpectedRevision } from '../../eventstore/eventStore.js';
import type { RawStore } from '../../rawstore/rawStore.js';
import { deterministicId } from '../../shared/ids.js';
import { sha256Hex } from '../../shared/secrets.js';
import { envelopeBytes, RecordBatcher, type Batch } from './recordBatcher.js';
import { boundsChecker } from '../../../commands/ingestion/recordBounds.js';
import { boundedItem } from './withinBounds.js';

type KeyedRejected = RejectedItem & { key: string };

/**
 * Normalises one stored payload into record events on the job's ingest stream. The events are
 * cut deterministically (`RecordBatcher`), get ids derived from the job, kind, batch number and
 * content, and are appended one by one at explicit revisions: the first at `no_stream`, each
 * next at the revision the previous append returned. A run repeated after a crash re-sends the
 * events already stored at the same revisions, which the store answers as replays, and appends
 * the rest: each record is written exactly once, on every backend.
 */
export async function runEtlJob(
  eventStore: EventStore,
  rawStore: RawStore,
  parser: DeviceParser,
  jobStream: string,
  upload: UploadAccepted['data'],
  /** Checked before each event: true stops the run (its user is being deleted, or the provider's data erased). */
  cancelled: () => Promise<boolean> = async () => false,
  /**
   * The data key of the upload's generation (docs/erasure.md): opens the stored payload and seals
   * each event's records (or rejected lines) once. Without it the events carry them in the clear.
   */
  keys?: { sealer: EventSealer; openPayload: (stored: Buffer) => Buffer },
): Promise<Extract<EtlOutcome, { kind: 'succeeded' }>> {
  const stored = await rawStore.get(upload.object_key);
  const payload = keys ? keys.openPayload(stored) : stored;
  const stream = ingestStream(upload.user_id, jobStream);
  const base = { job: jobStream, user_id: upload.user_id, tenant_id: upload.tenant_id, provider: upload.provider, ingested_at: upload.accepted_at };
  const recordsEnvelope = envelopeBytes({ ...base, records: [] });
  const batchers = new Map<RecordKind, RecordBatcher<NormalizedRecord>>();
  const rejected = new RecordBatcher<KeyedRejected>(envelopeBytes({ ...base, items: [], at: upload.accepted_at }));
  const batchNo = new Map<string, number>();
  const counts: Record<string, number> = {};
  const types = new Set<string>();
  let firstDay: string | null = null;
  let lastDay: string | null = null;
  let rejectedCount = 0;
  let expectedRevision: ExpectedRevision = 'no_stream';

  const append = async (kind: RecordKind | 'rejected', batch: Batch<NormalizedRecord> | Batch<KeyedRejected> | null) => {
    if (!batch) return;
    if (await cancelled()) throw new EtlCancelledError();
    const n = batchNo.get(kind) ?? 0;
    batchNo.set(kind, n + 1);
    const plain: RecordsIngested | RecordsRejected =
      kind === 'rejected'
        ? { type: 'records.rejected', data: { ...base, batch: n, items: batch.items as KeyedRejected[], at: upload.accepted_at } }
        : { type: INGESTED_EVENT[kind], data: { ...base, batch: n, records: batch.items as NormalizedRecord[] } };
    const event: Event = keys
      ? { type: plain.type, data: keys.sealer.seal(plain.type, plain.data, kind === 'rejected' ? 'items' : 'records', batch.json, batch.items.length) }
      : plain;
    const result = await eventStore.appendToStream(stream, [{ ...event, id: deterministicId(jobStream, kind, String(n), batch.digest) }], {
      expectedRevision,
    });
    expectedRevision = result.nextExpectedRevision;
  };

  // Every source's records pass the same interval bounds here: nothing outside them reaches the log.
  const check = boundsChecker(upload.accepted_at);
  for await (const parsed of parser.parse(payload, { provider: upload.provider, receivedAt: upload.accepted_at, dataType: upload.data_type ?? null })) {
    const item = boundedItem(parsed, check, upload.accepted_at);
    if ('rejected' in item) {
      // Keyed by content: the same bad line sent again is still one rejected record.
      const key = sha256Hex(`${upload.provider}\u0000${item.rejected.reason}\u0000${item.rejected.excerpt}`);
      rejectedCount++;
      await append('rejected', rejected.add({ ...item.rejected, key }));
      continue;
    }
    const r = item.record;
    let batcher = batchers.get(r.kind);
    if (!batcher) batchers.set(r.kind, (batcher = new RecordBatcher(recordsEnvelope)));
    counts[r.kind] = (counts[r.kind] ?? 0) + 1;
    types.add(r.kind === 'quantity' || r.kind === 'category' ? r.type : r.kind);
    const day = recordDay(r);
    if (day) {
      if (!firstDay || day < firstDay) firstDay = day;
      if (!lastDay || day > lastDay) lastDay = day;
    }
    await append(r.kind, batcher.add(r));
  }
  for (const [kind, batcher] of batchers) await append(kind, batcher.take());
  await append('rejected', rejected.take());
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
