import { afterEach, describe, expect, it } from 'vitest';
import { ingestStream, type ImportProgress, type RecordsIngestedData } from '../../../commands/ingestion/ingestedEvents.js';
import type { RecordedEvent } from '../../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { runEtlJob } from '../../../src/processes/etl/runEtlJob.js';
import { appleHealthImport } from '../../../src/sources/files/apple-health/appleHealthDecoder.js';
import { exportXml, zipOf } from '../../sources/files/apple-health/exportFixtures.js';
import { appleUpload, crashingAfter, rawStoreOf } from './etlRunFakes.js';

/** contracts §13 / issue 21: an import resumes from its last checkpoint, losing and duplicating nothing. */

const JOB = `upload-u1-${'ef'.repeat(16)}`;
const upload = appleUpload('u1');
const STREAM = ingestStream(upload.user_id, JOB);

async function exportZip(n: number): Promise<Buffer> {
  const rows = Array.from({ length: n }, (_, i) => {
    const at = new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000');
    const type = i % 3 === 0 ? 'HKQuantityTypeIdentifierStepCount' : 'HKQuantityTypeIdentifierHeartRate';
    const unit = i % 3 === 0 ? 'count' : 'count/min';
    // Every 97th record is unusable: rejections interleave with records across checkpoints.
    const value = i % 97 === 0 ? 'n/a' : String(50 + (i % 50));
    return `<Record type="${type}" sourceName="Watch" unit="${unit}" creationDate="${at}" startDate="${at}" endDate="${at}" value="${value}"/>`;
  });
  return zipOf({ 'apple_health_export/export.xml': exportXml(rows.join('\n')) });
}

const open: SqliteEventStore[] = [];
const newStore = () => {
  const s = new SqliteEventStore({ path: ':memory:' });
  open.push(s);
  return s;
};
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

const content = (events: RecordedEvent[]) => events.map((e) => ({ id: e.id, type: e.type, revision: e.streamRevision }));

describe('checkpoints of an import (contracts §13: resumes after a crash from its last checkpoint)', () => {
  it('appends import.progress every N items, after every batch before it, with the tallies so far', async () => {
    const payload = await exportZip(2500);
    const store = newStore();
    const outcome = await runEtlJob(store, rawStoreOf(payload), appleHealthImport, JOB, upload, undefined, undefined, { checkpointItems: 1000 });
    const events = await store.readStream(STREAM);
    const progress = events.filter((e) => e.type === 'import.progress') as RecordedEvent<ImportProgress>[];
    expect(progress.map((p) => p.data.items)).toEqual([1000, 2000]);
    const before = events.slice(0, progress[0]!.streamRevision);
    const stored = before.flatMap((e) => ((e.data as RecordsIngestedData).records ?? (e.data as { items?: unknown[] }).items ?? []) as unknown[]);
    expect(stored).toHaveLength(1000);
    expect(progress[0]!.data.bytes_total).toBe(payload.length);
    expect(outcome.kind).toBe('succeeded');
    expect(outcome.rejected).toBe(Math.ceil(2500 / 97));
    expect((outcome.records.quantity ?? 0) + outcome.rejected).toBe(2500);
  });

  it.each([1, 3, 4, 6, 7])('killed after %i appends, a re-run starts from the last checkpoint and ends with exactly the stream of an uninterrupted run', async (appends) => {
    const payload = await exportZip(2500);
    const reference = newStore();
    const expected = await runEtlJob(reference, rawStoreOf(payload), appleHealthImport, JOB, upload, undefined, undefined, { checkpointItems: 1000 });
    const want = content(await reference.readStream(STREAM));

    const store = newStore();
    await expect(runEtlJob(crashingAfter(store, STREAM, appends), rawStoreOf(payload), appleHealthImport, JOB, upload, undefined, undefined, { checkpointItems: 1000 })).rejects.toThrow('killed');
    const resumed = await runEtlJob(store, rawStoreOf(payload), appleHealthImport, JOB, upload, undefined, undefined, { checkpointItems: 1000 });
    expect(content(await store.readStream(STREAM))).toEqual(want);
    expect(resumed).toEqual(expected);
    const ids = (await store.readStream(STREAM)).filter((e) => e.type === 'samples.ingested').flatMap((e) => (e.data as RecordsIngestedData).records.map((r) => r.external_id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(expected.records.quantity!);
  });

  // The batches open at a checkpoint or at the end are appended together: a resumed run, which met the kinds in
  // another order (those before its checkpoint it never saw), must append them in the same order.
  it.each([2, 3, 4, 5])('killed after %i appends while batches of several kinds are appended together, a re-run ends with the stream of an uninterrupted run', async (appends) => {
    const at = (m: number) => new Date(Date.UTC(2025, 0, 1, 1, m)).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000');
    const step = (m: number) => `<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Watch" unit="count" startDate="${at(m)}" endDate="${at(m + 1)}" value="${m + 1}"/>`;
    const stand = (m: number) => `<Record type="HKCategoryTypeIdentifierAppleStandHour" sourceName="Watch" startDate="${at(m)}" endDate="${at(m + 1)}" value="HKCategoryValueAppleStandHourStood"/>`;
    const payload = await zipOf({ 'apple_health_export/export.xml': exportXml([step(0), step(2), step(4), stand(6), step(8), stand(10), step(12)].join('\n')) });
    const run = (store: SqliteEventStore | ReturnType<typeof crashingAfter>) => runEtlJob(store, rawStoreOf(payload), appleHealthImport, JOB, upload, undefined, undefined, { checkpointItems: 3 });
    const reference = newStore();
    const expected = await run(reference);
    expect(expected.records).toEqual({ quantity: 5, category: 2 });
    const store = newStore();
    await expect(run(crashingAfter(store, STREAM, appends))).rejects.toThrow('killed');
    expect(await run(store)).toEqual(expected);
    expect(content(await store.readStream(STREAM))).toEqual(content(await reference.readStream(STREAM)));
  });
});
