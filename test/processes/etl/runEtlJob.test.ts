import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_EVENT_JSON_BYTES, MAX_RECORDS_PER_EVENT, type DeviceParser, type NormalizedRecord } from '../../../commands/ingestion/records.js';
import { ingestStream, type RecordsIngestedData } from '../../../commands/ingestion/ingestedEvents.js';
import { healthKitParser } from '../../../src/sources/files/device-a/healthKitParser.js';
import { ConcurrencyError, type AppendResult, type EventStore, type ExpectedRevision, type RecordedEvent } from '../../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import type { RawStore } from '../../../src/rawstore/rawStore.js';
import { EtlCancelledError, runEtlJob } from '../../../src/processes/etl/runEtlJob.js';
import { DEVICE_JOB, deviceUpload } from './etlRunFakes.js';

const JOB = DEVICE_JOB;
const upload = deviceUpload;
const STREAM = ingestStream(upload.user_id, JOB);

/** A device-a export: heart-rate samples, a few workouts with long routes, and some unusable lines. */
function exportOf(samples: number, shift = 0): Buffer {
  const lines: string[] = [];
  const start = Date.UTC(2026, 0, 1);
  const at = (ms: number) => new Date(start + ms).toISOString();
  for (let i = 0; i < samples; i++) {
    lines.push(
      JSON.stringify({
        kind: 'quantity',
        uuid: `C4A5E0D1-7B2F-4E3A-9C1D-${i.toString(16).toUpperCase().padStart(12, '0')}`,
        type: 'HKQuantityTypeIdentifierHeartRate',
        value: 50 + ((i * 7) % 90) + shift,
        unit: 'count/min',
        start_date: at(i * 10_000),
        end_date: at(i * 10_000),
        source_name: 'Apple Watch',
        device_model: 'Watch',
        product_type: 'Watch7,1',
        was_user_entered: false,
        metadata: { HKTimeZone: 'Europe/Berlin' },
      }),
    );
    if (i % 997 === 0) lines.push(`{"kind":"quantity","broken line ${i}`);
  }
  return gzipSync(lines.join('\n'));
}

const rawStoreOf = (payload: Buffer): RawStore =>
  ({ kind: 'file', get: async () => payload }) as unknown as RawStore;

/** Wraps a store: records the ingest stream's appends, and can "crash" (throw) after a number of them. */
function recording(store: EventStore, crashAfter = Infinity) {
  const calls: { expected: ExpectedRevision; result: AppendResult }[] = [];
  const wrapped: EventStore = Object.create(store);
  wrapped.appendToStream = async (stream, events, options) => {
    if (stream === STREAM && calls.length >= crashAfter) throw new Error('crashed');
    const result = await store.appendToStream(stream, events, options);
    if (stream === STREAM) calls.push({ expected: options?.expectedRevision ?? 'any', result });
    return result;
  };
  return { store: wrapped, calls };
}

const content = (events: RecordedEvent[]) => events.map((e) => ({ id: e.id, type: e.type, revision: e.streamRevision, data: e.data }));

const open: SqliteEventStore[] = [];
const newStore = () => {
  const s = new SqliteEventStore({ path: ':memory:' });
  open.push(s);
  return s;
};
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

describe('runEtlJob: the events of one ETL job', () => {
  const payload = exportOf(2600);

  it('cuts records into events of at most 1000 records and 512 KiB of JSON, every record once, at revisions 0, 1, 2, … of the job stream', async () => {
    const store = newStore();
    const outcome = await runEtlJob(store, rawStoreOf(payload), healthKitParser, JOB, upload);
    expect(outcome).toMatchObject({ kind: 'succeeded', records: { quantity: 2600 }, rejected: 3 });
    const events = await store.readStream(STREAM);
    expect(events.map((e) => e.streamRevision)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual(['samples.ingested', 'samples.ingested', 'samples.ingested', 'records.rejected']);
    for (const e of events) {
      expect(Buffer.byteLength(JSON.stringify(e.data))).toBeLessThanOrEqual(MAX_EVENT_JSON_BYTES);
      const d = e.data as { records?: unknown[]; items?: unknown[] };
      expect((d.records ?? d.items)!.length).toBeLessThanOrEqual(MAX_RECORDS_PER_EVENT);
    }
    const ids = events.flatMap((e) => ((e.data as RecordsIngestedData).records ?? []).map((r) => r.external_id));
    expect(ids).toHaveLength(2600);
    expect(new Set(ids).size).toBe(2600);
  });

  it('keeps events of large records under 512 KiB by size, not by count', async () => {
    const big = (i: number): NormalizedRecord =>
      ({ kind: 'workout', external_id: `w-${i}`, start_date: '2026-01-01T00:00:00.000Z', end_date: '2026-01-01T01:00:00.000Z', route: Array.from({ length: 400 + (i % 7) }, (_, p) => ({ timestamp: '2026-01-01T00:30:00.000Z', p, lat: 52.5 + p / 1e5 })) }) as unknown as NormalizedRecord;
    const parser: DeviceParser = {
      slug: 'device-a',
      async *parse() {
        for (let i = 0; i < 120; i++) yield { record: big(i) };
      },
    };
    const store = newStore();
    await runEtlJob(store, rawStoreOf(Buffer.alloc(0)), parser, JOB, upload);
    const events = await store.readStream(STREAM);
    expect(events.length).toBeGreaterThan(2);
    for (const e of events) expect(Buffer.byteLength(JSON.stringify(e.data))).toBeLessThanOrEqual(MAX_EVENT_JSON_BYTES);
    expect(events.flatMap((e) => (e.data as RecordsIngestedData).records)).toHaveLength(120);
  });

  it('awaits its pause before every append, so a bulk job can let small jobs go first (issue 27, smallJobsFirst.ts)', async () => {
    const { store, calls } = recording(newStore());
    let pauses = 0;
    const pause = () => {
      pauses++;
      // Every append so far came after a pause: the run never appends without asking first.
      expect(calls.length).toBe(pauses - 1);
      return new Promise<void>((r) => setTimeout(r, 1));
    };
    await runEtlJob(store, rawStoreOf(payload), healthKitParser, JOB, upload, undefined, undefined, { pause });
    expect(calls.length).toBeGreaterThan(1);
    expect(pauses).toBe(calls.length);
  });

  it('produces the same events (ids, revisions, content) when the same payload is run twice on fresh stores', async () => {
    const a = newStore();
    const b = newStore();
    await runEtlJob(a, rawStoreOf(payload), healthKitParser, JOB, upload);
    await runEtlJob(b, rawStoreOf(payload), healthKitParser, JOB, upload);
    expect(content(await b.readStream(STREAM))).toEqual(content(await a.readStream(STREAM)));
  });

  it('after a crash between two appends, a re-run replays the stored events at their revisions, appends only the rest and ends with the same stream', async () => {
    const reference = newStore();
    await runEtlJob(reference, rawStoreOf(payload), healthKitParser, JOB, upload);
    const expected = content(await reference.readStream(STREAM));

    const store = newStore();
    const first = recording(store, 2);
    await expect(runEtlJob(first.store, rawStoreOf(payload), healthKitParser, JOB, upload)).rejects.toThrow('crashed');
    expect(await store.readStream(STREAM)).toHaveLength(2);

    const rerun = recording(store);
    await runEtlJob(rerun.store, rawStoreOf(payload), healthKitParser, JOB, upload);
    expect(rerun.calls.map((c) => c.expected)).toEqual(['no_stream', 0, 1, 2]);
    expect(rerun.calls.map((c) => c.result.replayed)).toEqual([true, true, false, false]);
    expect(rerun.calls.map((c) => c.result.nextExpectedRevision)).toEqual([0, 1, 2, 3]);
    expect(content(await store.readStream(STREAM))).toEqual(expected);

    // Once more, after it finished: nothing new.
    const again = recording(store);
    await runEtlJob(again.store, rawStoreOf(payload), healthKitParser, JOB, upload);
    expect(again.calls.every((c) => c.result.replayed)).toBe(true);
    expect(content(await store.readStream(STREAM))).toEqual(expected);
  });

  it('refuses to continue a stream whose stored events differ from what the re-run produces, instead of mixing the two', async () => {
    const store = newStore();
    await expect(runEtlJob(recording(store, 1).store, rawStoreOf(payload), healthKitParser, JOB, upload)).rejects.toThrow('crashed');
    const stored = content(await store.readStream(STREAM));
    // Same job, other records (as a changed parser would make them).
    await expect(runEtlJob(store, rawStoreOf(exportOf(2600, 1)), healthKitParser, JOB, upload)).rejects.toBeInstanceOf(ConcurrencyError);
    expect(content(await store.readStream(STREAM))).toEqual(stored);
  });

  it('with more items than a checkpoint holds, a re-run after a crash past a checkpoint resumes from it and ends with the stream and outcome of an uninterrupted run', async () => {
    const reference = newStore();
    const expected = await runEtlJob(reference, rawStoreOf(payload), healthKitParser, JOB, upload, undefined, undefined, { checkpointItems: 1000 });
    const want = content(await reference.readStream(STREAM));
    expect(want.filter((e) => e.type === 'import.progress')).toHaveLength(2);

    const store = newStore();
    // Killed right after the first checkpoint was appended.
    const checkpointAt = want.find((e) => e.type === 'import.progress')!.revision;
    await expect(runEtlJob(recording(store, checkpointAt + 1).store, rawStoreOf(payload), healthKitParser, JOB, upload, undefined, undefined, { checkpointItems: 1000 })).rejects.toThrow('crashed');
    const rerun = recording(store);
    const resumed = await runEtlJob(rerun.store, rawStoreOf(payload), healthKitParser, JOB, upload, undefined, undefined, { checkpointItems: 1000 });
    // Nothing before the checkpoint is sent again: the first append continues after it.
    expect(rerun.calls[0]!.expected).toBe(checkpointAt);
    // A checkpoint holds the time it was written; the rest is the same, and the ids stand for the content.
    const withoutTimes = (events: ReturnType<typeof content>) => events.map((e) => (e.type === 'import.progress' ? { ...e, data: { ...e.data, at: null } } : e));
    expect(withoutTimes(content(await store.readStream(STREAM)))).toEqual(withoutTimes(want));
    expect(resumed).toEqual(expected);
  });

  it('stops before the next event when its user is being deleted', async () => {
    const store = newStore();
    let checks = 0;
    await expect(runEtlJob(store, rawStoreOf(payload), healthKitParser, JOB, upload, async () => ++checks > 1)).rejects.toBeInstanceOf(EtlCancelledError);
    expect(await store.readStream(STREAM)).toHaveLength(1);
  });
});
