import { INGESTED_EVENT, type DeviceParser, type NormalizedRecord, type ParseItem, type RecordKind, type RejectedItem } from '../../../commands/ingestion/records.js';
import { ingestStream, type ImportProgress, type RecordsIngested, type RecordsRejected } from '../../../commands/ingestion/ingestedEvents.js';
import { isSealedBytes, openBytes } from '../../crypto/payloadCipher.js';
import type { ImportDecoder } from '../../sources/files/importSource.js';
import { UnreadableExportError } from '../../sources/files/exportShared/unreadableExport.js';
import type { ImportContext } from '../../sources/files/exportShared/importContext.js';
import { etlTallyOf, lastCheckpoint, tallyFrom } from './etlCheckpoint.js';
import type { RecordLedger } from '../../recordledger/recordLedger.js';
import { ledgerOf } from './recordLedger.js';
import { RecordBlocks, type Decided } from './recordBlocks.js';
import { recordDay } from './recordDay.js';
import { rawByteSource } from './rawByteSource.js';
import { withInlinePayload } from '../../rawstore/inlinePayload.js';
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

type KeyedRejected = RejectedItem & { key: string; n: number };
/**
 * What a batch keeps of each record until its event is appended: the record itself for an event
 * in the clear; for a sealed one only what the ledger's commit needs, the fingerprint this job
 * claimed (null without a ledger), so that the record dies once it is batched (recordBatcher.ts).
 */
type Kept = NormalizedRecord | Buffer | null;

/**
 * Items between two checkpoints of a run (contracts §13): a crash costs at most this many items'
 * work, and BLOCK_RECORDS more when the run compares blocks (a checkpoint waits for a block's end).
 */
export const CHECKPOINT_ITEMS = 10_000;

export type EtlKeys = {
  sealer: EventSealer;
  /** The data key of the upload's generation, which sealed the stored payload. */
  dataKey: { key: Buffer; keyId: string };
};

export type EtlRunOptions = {
  checkpointItems?: number;
  /** Records an earlier upload of the same provider stored already (contracts §13 `unchanged`): not written again. */
  ledger?: RecordLedger;
  /**
   * With a ledger: compare blocks of records first (recordBlocks.ts), the default; false notes
   * every record on its own, the rule blocks must answer as (test/processes/etl/recordBlocks.test.ts).
   */
  compareBlocks?: boolean;
  /** Awaited before each append when given (a bulk job lets its thread's small jobs go first: smallJobsFirst.ts). */
  pause?: () => Promise<void> | undefined;
};

/**
 * Normalises one stored payload into record events on the job's ingest stream. The events are
 * cut deterministically (`RecordBatcher`), get ids derived from the job, kind, batch number and
 * content, and are appended one by one at explicit revisions: the first at `no_stream`, each
 * next at the revision the previous append returned. Every CHECKPOINT_ITEMS items every open batch
 * is stored and an `import.progress` event records the tallies so far: a run repeated after a
 * crash starts from the last one (skipping the items before it), re-sends the events stored after
 * it at the same revisions, which the store answers as replays, and appends the rest: each record
 * is written exactly once, on every backend.
 *
 * An import (`ImportDecoder`) reads the stored object by range, so memory does not grow with the
 * upload; a device parser gets the payload whole, as its formats are bounded (512 MiB inflated).
 */
export async function runEtlJob(
  eventStore: EventStore,
  rawStore: RawStore,
  decoder: DeviceParser | ImportDecoder,
  jobStream: string,
  upload: UploadAccepted['data'],
  /** Checked before each event: true stops the run (its user is being deleted, or the provider's data erased). */
  cancelled: () => Promise<boolean> = async () => false,
  /** Opens the stored payload and seals each event's records once. Without it the events carry them in the clear. */
  keys?: EtlKeys,
  options: EtlRunOptions = {},
): Promise<Extract<EtlOutcome, { kind: 'succeeded' | 'unreadable' }>> {
  const every = options.checkpointItems ?? CHECKPOINT_ITEMS;
  // Fingerprints are keyed by the data key, so erasing the data makes them meaningless (recordLedger.ts):
  // without a data key (payloads stored in the clear) there is no ledger.
  const ledger = options.ledger && keys ? ledgerOf(options.ledger, keys.dataKey.key, upload, jobStream) : null;
  const blocks = ledger && options.compareBlocks !== false ? new RecordBlocks(ledger) : null;
  const ctx: ImportContext = { provider: upload.provider, receivedAt: upload.accepted_at, dataType: upload.data_type ?? null, userId: upload.user_id, timeZone: upload.time_zone ?? null };
  let items: AsyncIterable<ParseItem>;
  let bytesTotal = upload.bytes;
  let bytesRead = () => bytesTotal;
  const raw = withInlinePayload(rawStore, upload.object_key, upload.inline_payload);
  if ('decode' in decoder) {
    const source = await rawByteSource(raw, upload.object_key, keys?.dataKey ?? null);
    bytesTotal = source.size;
    bytesRead = () => source.bytesRead;
    items = decoder.decode(source, ctx);
  } else {
    const stored = await raw.get(upload.object_key);
    const payload = keys && isSealedBytes(stored) ? openBytes(keys.dataKey.key, stored, keys.dataKey.keyId) : stored;
    items = decoder.parse(payload, ctx);
  }

  const stream = ingestStream(upload.user_id, jobStream);
  const base = { job: jobStream, user_id: upload.user_id, tenant_id: upload.tenant_id, provider: upload.provider, ingested_at: upload.accepted_at };
  const recordsEnvelope = envelopeBytes({ ...base, records: [] });
  const batchers = new Map<RecordKind, RecordBatcher<Kept>>();
  const rejected = new RecordBatcher<KeyedRejected>(envelopeBytes({ ...base, items: [], at: upload.accepted_at }));
  const resumed = await lastCheckpoint(eventStore, stream);
  const t = tallyFrom(resumed?.data);
  const batchNo = new Map<string, number>(Object.entries(resumed?.data.batches ?? {}));
  let expectedRevision: ExpectedRevision = resumed ? resumed.streamRevision : 'no_stream';

  const append = async (kind: RecordKind | 'rejected', batch: Batch<Kept> | Batch<KeyedRejected> | null) => {
    if (!batch) return;
    await options.pause?.();
    if (await cancelled()) throw new EtlCancelledError();
    const n = batchNo.get(kind) ?? 0;
    batchNo.set(kind, n + 1);
    const type = kind === 'rejected' ? 'records.rejected' : INGESTED_EVENT[kind];
    let event: Event;
    if (keys) {
      // Sealed from the batch's JSON: a record batch keeps fingerprints, not records (`Kept`).
      const envelope = kind === 'rejected' ? { ...base, batch: n, at: upload.accepted_at } : { ...base, batch: n };
      event = { type, data: keys.sealer.seal(type, envelope, kind === 'rejected' ? 'items' : 'records', batch.json, batch.items.length) };
    } else {
      const plain: RecordsIngested | RecordsRejected =
        kind === 'rejected'
          ? { type: 'records.rejected', data: { ...base, batch: n, items: batch.items as KeyedRejected[], at: upload.accepted_at } }
          : { type: INGESTED_EVENT[kind], data: { ...base, batch: n, records: batch.items as NormalizedRecord[] } };
      event = plain;
    }
    await appendOne({ ...event, id: deterministicId(jobStream, kind, String(n), batch.digest) });
    // Only now, the batch durably in the log, may its records count as stored for other uploads
    // (committed with the ledger's next write): a job that parks before appending a record never
    // makes a later upload skip it (issue 35).
    if (ledger && kind !== 'rejected') ledger.appended(batch.items as Buffer[]);
  };
  const appendOne = async (event: Event) => {
    const result = await eventStore.appendToStream(stream, [event], { expectedRevision });
    expectedRevision = result.nextExpectedRevision;
  };
  const flushAll = async () => {
    // In a fixed order: a run resumed from a checkpoint meets its kinds in another order than the run it resumes,
    // and must append the same events at the same revisions.
    for (const kind of [...batchers.keys()].sort()) await append(kind, batchers.get(kind)!.take());
    await append('rejected', rejected.take());
    // Every record decided so far is in the log now: so is every record of the blocks this job claimed.
    if (ledger) await ledger.stored(blocks ? blocks.settled() : []);
  };
  const checkpoint = async () => {
    await flushAll();
    if (await cancelled()) throw new EtlCancelledError();
    const progress: ImportProgress = {
      type: 'import.progress',
      data: {
        job: jobStream,
        user_id: upload.user_id,
        tenant_id: upload.tenant_id,
        provider: upload.provider,
        items: t.items,
        bytes_read: bytesRead(),
        bytes_total: bytesTotal,
        records: { ...t.records },
        rejected: t.rejected,
        unchanged: t.unchanged,
        types: [...t.types].sort(),
        first_day: t.firstDay,
        last_day: t.lastDay,
        batches: Object.fromEntries(batchNo),
        at: new Date().toISOString(),
      },
    };
    await appendOne({ ...progress, id: deterministicId(jobStream, 'progress', String(t.items)) });
  };

  // Every source's records pass the same interval bounds here: nothing outside them reaches the log.
  const check = boundsChecker(upload.accepted_at);
  const skip = t.items;
  let seen = 0;
  let failure: UnreadableExportError | null = null;
  const pending: NormalizedRecord[] = [];
  const keep = async (decided: readonly Decided[]) => {
    for (const { record: r, unchanged, fp } of decided) {
      if (unchanged) {
        t.unchanged++;
        continue;
      }
      let batcher = batchers.get(r.kind);
      if (!batcher) batchers.set(r.kind, (batcher = new RecordBatcher(recordsEnvelope)));
      t.records[r.kind] = (t.records[r.kind] ?? 0) + 1;
      t.types.add(r.kind === 'quantity' || r.kind === 'category' ? r.type : r.kind);
      const day = recordDay(r);
      if (day) {
        if (!t.firstDay || day < t.firstDay) t.firstDay = day;
        if (!t.lastDay || day > t.lastDay) t.lastDay = day;
      }
      // Awaited only when a batch closed: an await per record was a promise and a turn of the microtask queue each.
      const closed = keys ? batcher.add(r, JSON.stringify(r), fp) : batcher.add(r);
      if (closed) await append(r.kind, closed);
    }
  };
  /** Decides and batches what waits: every record noted on its own, or the complete blocks (the open one too when `all`). */
  const store = async (all = true) => {
    if (blocks) return keep(await blocks.decide(all));
    if (pending.length === 0) return;
    const noted = ledger ? await ledger.known(pending) : null;
    await keep(pending.map((record, i) => ({ record, unchanged: noted?.known[i] ?? false, fp: noted?.claimed[i] ?? null })));
    pending.length = 0;
  };
  // Blocks: a checkpoint falls due every `every` items and is taken where the next block begins.
  let checkpointDue = false;
  try {
    for await (const parsed of items) {
      // A resumed run passes over what the checkpoint holds: the decoder yields the same items in the same order.
      if (seen++ < skip) {
        blocks?.passed(parsed);
        continue;
      }
      const item = boundedItem(parsed, check, upload.accepted_at);
      if (checkpointDue && ('rejected' in item || blocks!.begins(item.record))) {
        await store();
        await checkpoint();
        checkpointDue = false;
      }
      t.items++;
      if ('rejected' in item) {
        await store();
        // Keyed by content and place: identical bad lines of one upload are each counted (contracts §12),
        // while the same upload sent again under another Upload-Id still counts its lines once.
        const key = sha256Hex(`${upload.provider}\u0000${item.rejected.location}\u0000${item.rejected.reason}\u0000${item.rejected.excerpt}`);
        await append('rejected', rejected.add({ ...item.rejected, key, n: t.rejected++ }));
      } else if (blocks) {
        blocks.add(item.record);
        if (blocks.ready) await store(false);
      } else {
        pending.push(item.record);
        if (pending.length >= (ledger ? LEDGER_BATCH : 1)) await store();
      }
      if (t.items % every === 0) {
        if (blocks) checkpointDue = true;
        else {
          await store();
          await checkpoint();
        }
      }
    }
  } catch (err) {
    if (!(err instanceof UnreadableExportError)) throw err;
    failure = err;
  }
  await store();
  await flushAll();
  const tally = etlTallyOf(t);
  if (failure) return { kind: 'unreadable', error: failure.location ? `${failure.location}: ${failure.message}` : failure.message, ...tally };
  return { kind: 'succeeded', ...tally };
}

/** Records are checked against the ledger this many at a time. */
const LEDGER_BATCH = 500;

export class EtlCancelledError extends Error {
  override name = 'EtlCancelledError';
  constructor() {
    super('the user is being deleted');
  }
}
