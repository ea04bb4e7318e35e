import { join } from 'node:path';
import type { RecordsIngestedData } from '../../../commands/ingestion/ingestedEvents.js';
import { INGESTED_EVENT, type NormalizedRecord, type RecordKind } from '../../../commands/ingestion/records.js';
import type { RecordedEvent } from '../../../src/eventstore/eventStore.js';
import type { Projection } from '../../../src/projector/projection.js';
import type { Change, Doc, PositionedChange, ReadStore } from '../../../src/readstore/readStore.js';
import { deriveBatch, pushChanges } from '../../../src/projector/batchChanges.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../../support/tmp.js';
import type { QuantityRecord } from '../../../commands/ingestion/records.js';
import { findQuantityType } from '../../../src/catalog/quantityCatalog.js';
import { quantity } from '../../server/records/pipelineFixtures.js';
import { decodeBlock, SAMPLE_BLOCKS, type SampleBlockDoc } from '../../../projections/records/sampleBlocks/sampleBlock.js';
import type { SampleDoc } from '../../../projections/records/samplesProjection.js';

export const USER = '00000000-0000-4000-8000-0000000000aa';
export const TENANT = '00000000-0000-4000-8000-0000000000bb';
export const PROVIDER = 'device-a';
export const INGESTED_AT = '2026-11-02T10:00:00.000Z';

/** A recorded `*.ingested` event at a chosen global position, as the projector hands it to evolve. */
export function ingested<R extends NormalizedRecord>(kind: RecordKind, position: number, records: R[], over: Partial<RecordsIngestedData<R>> = {}): RecordedEvent {
  const data: RecordsIngestedData<R> = {
    job: 'job-1',
    user_id: USER,
    tenant_id: TENANT,
    provider: PROVIDER,
    ingested_at: INGESTED_AT,
    batch: 0,
    records,
    ...over,
  };
  return {
    id: `evt-${position}`,
    type: INGESTED_EVENT[kind],
    data: data as unknown as Record<string, unknown>,
    metadata: {},
    streamName: `ingest-${USER}-test`,
    streamRevision: position,
    globalPosition: position,
    createdAt: new Date(INGESTED_AT),
  };
}

/** A quantity record of a catalog type (its storage unit) starting at `start` (epoch ms), `minutes` long, of a given stream, as the property tests draw them. */
export const drawnQuantity = (r: { key: string; type: string; value: number; start: number; minutes: number }, stream: Partial<QuantityRecord>): QuantityRecord =>
  quantity({
    external_id: r.key,
    type: r.type,
    value: r.value,
    unit: findQuantityType(r.type)!.unit,
    start_date: new Date(r.start).toISOString(),
    end_date: new Date(r.start + r.minutes * 60_000).toISOString(),
    ...stream,
  });

/** An event of the user's own stream (a source order set, a provider's data erased) at a chosen position. */
export const userEventAt = (position: number, type: string, data: Record<string, unknown>): RecordedEvent => ({
  id: `evt-${position}`,
  type,
  data: { user_id: USER, tenant_id: TENANT, ...data },
  metadata: {},
  streamName: `user-${USER}`,
  streamRevision: position,
  globalPosition: position,
  createdAt: new Date('2026-11-04T00:00:00.000Z'),
});

/**
 * The number the projector would hand evolve with an event (src/projector/eventSequences.ts):
 * here the test's own position stands in for it, small and unique like a sequence number.
 */
export const sequenceOf = (projection: Projection, e: RecordedEvent): number => (projection.sequenced?.(e) ? e.globalPosition : 0);

/**
 * Applies each event to `store` as a batch of its own, as the projector does: evolve, then the
 * projection's derivation (if any). Returns the changes.
 */
export async function project(store: ReadStore, projection: Projection, events: readonly RecordedEvent[]): Promise<Change[]> {
  const all: Change[] = [];
  for (const e of events) {
    const changes: PositionedChange[] = [];
    pushChanges(projection, e, changes, sequenceOf(projection, e));
    if (projection.derive) await deriveBatch(store, projection.derive, [e], changes, (c) => store.applyChanges(c));
    await store.applyChanges(changes);
    all.push(...changes.map(({ position: _p, index: _i, ...c }) => c as Change));
  }
  return all;
}

/** A real embedded read store holding the projection's collections, fed through evolve. */
export async function projectionHarness(projection: Projection) {
  // A directory per store: one kept across calls would outlive the test file that made it (removed
  // when that file ends, while a later file of the same process still held it).
  const store: ReadStore = new SqliteReadStore({ path: join(tempDir('wellstream-proj-'), 'read.db') });
  await store.ensureCollections(projection.collections);
  return {
    store,
    /**
     * Applies each event as a batch of its own, as the projector does: evolve, then the
     * projection's derivation (if any). Returns the changes.
     */
    apply: (...events: RecordedEvent[]): Promise<Change[]> => project(store, projection, events),
    all: <T extends Doc = Doc>(collection: string) => store.find<T>(collection, { sort: [['_id', 1]] }),
    close: () => store.close(),
  };
}

/**
 * What `projections rebuild` does (src/projector/rebuild.ts) into an empty `store`: every event
 * through evolve; a derivation that folds evolve's changes runs on each chunk of events (here: all
 * events between two barriers, so chunks differ from the live batches), any other once over all
 * rows at the end.
 */
export async function rebuildInto(store: ReadStore, projection: Projection, history: readonly RecordedEvent[]): Promise<void> {
  const derive = projection.derive;
  if (!derive?.folds) {
    for (const e of history) await store.applyChanges(projection.evolve(e, sequenceOf(projection, e)));
    if (derive) for await (const chunk of derive.rebuildAll(store)) await store.applyChanges(chunk);
    return;
  }
  // As rebuild.ts: one Replay for the whole replay (the store's collections start empty).
  const replay = { projection: projection.name };
  for (let from = 0; from < history.length; ) {
    let to = from + 1;
    if (!derive.isBarrier(history[from]!)) while (to < history.length && !derive.isBarrier(history[to]!)) to++;
    const chunk = history.slice(from, to);
    const changes: PositionedChange[] = [];
    for (const e of chunk) pushChanges(projection, e, changes, sequenceOf(projection, e));
    await deriveBatch(store, derive, chunk, changes, (c) => store.applyChanges(c), undefined, replay);
    await store.applyChanges(changes);
    from = to;
  }
}

/** Every stored sample, decoded from its block, in key order. */
export async function storedSamples(store: ReadStore): Promise<SampleDoc[]> {
  const blocks = await store.find<SampleBlockDoc>(SAMPLE_BLOCKS, { sort: [['_id', 1]] });
  return blocks.flatMap((b) => decodeBlock(b.data)).sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
}
