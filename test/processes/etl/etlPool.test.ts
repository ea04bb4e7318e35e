import { EtlThreadHandle } from '../../../src/processes/etl/etlThreadHandle.js';
import { BULK_UPLOAD_BYTES } from '../../../src/processes/etl/etlTask.js';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { firstValueFrom, take, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ingestStream } from '../../../commands/ingestion/ingestedEvents.js';
import type { UploadAccepted } from '../../../commands/ingestion/upload.js';
import { userStream } from '../../../commands/users/user.js';
import { ensureDataDir } from '../../../src/app/dataDir.js';
import { loadConfig } from '../../../src/config.js';
import { dataKeysOf } from '../../../src/app/dataKeysOf.js';
import { EventOpener } from '../../../src/crypto/recordSealing.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { EtlThreadPool } from '../../../src/processes/etl/etlPool.js';
import { FileRawStore } from '../../../src/rawstore/fileRawStore.js';
import { tempDir } from '../../support/tmp.js';

/**
 * The ETL pool as the service uses it: jobs run on worker threads started from TypeScript (here
 * under vitest, whose transforms a new thread does not inherit), writing through their own
 * connection to the embedded event store, which the main thread's subscriptions hear at once.
 */

const SAMPLES = 5000;

function heartRateExport(samples: number): Buffer {
  const start = Date.UTC(2026, 0, 1);
  const lines = Array.from({ length: samples }, (_, i) =>
    JSON.stringify({
      kind: 'quantity',
      uuid: `C4A5E0D1-7B2F-4E3A-9C1D-${i.toString(16).toUpperCase().padStart(12, '0')}`,
      type: 'HKQuantityTypeIdentifierHeartRate',
      value: 60 + (i % 40),
      unit: 'count/min',
      start_date: new Date(start + i * 10_000).toISOString(),
      end_date: new Date(start + i * 10_000).toISOString(),
      metadata: { HKTimeZone: 'Europe/Berlin' },
    }),
  );
  return gzipSync(lines.join('\n'));
}

const dataDir = tempDir('wellstream-etl-pool-');
const config = loadConfig({ DATA_DIR: dataDir, ETL_CONCURRENCY: '2', LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv);
let store: SqliteEventStore;
let pool: EtlThreadPool;

async function uploadFor(userId: string, provider = 'device-a', body = heartRateExport(SAMPLES), extra: Partial<UploadAccepted['data']> = {}): Promise<{ jobStream: string; upload: UploadAccepted['data'] }> {
  const raw = new FileRawStore(join(dataDir, 'raw'));
  const object = await raw.put(body, userId);
  await raw.close();
  const upload: UploadAccepted['data'] = {
    upload_id: `up-${userId}`,
    user_id: userId,
    tenant_id: 't1',
    provider,
    object_key: object.key,
    sha256: object.sha256,
    bytes: object.bytes,
    content_type: 'application/gzip',
    tier: 'upload',
    accepted_at: '2026-03-01T00:00:00.000Z',
    token_id: 'tok-1',
    ...extra,
  };
  return { jobStream: `upload-${userId}-${object.sha256}`, upload };
}

async function register(userId: string): Promise<void> {
  await store.appendToStream(userStream(userId), [{ type: 'user.registered', data: { user_id: userId, tenant_id: 't1', external_ref: null, created_at: '2026-01-01T00:00:00.000Z' } }]);
}

beforeAll(() => {
  ensureDataDir(dataDir);
  // A poll far beyond the test's timeout: only the cross-thread wake-up can deliver in time.
  store = new SqliteEventStore({ path: join(dataDir, 'events.sqlite'), pollIntervalMs: 60_000 });
  pool = new EtlThreadPool(config);
});
afterAll(async () => {
  await pool.close();
  await store.close();
});

describe('EtlThreadPool', () => {
  it('normalises a job on a worker thread, and a subscription of the main thread is woken by its appends long before its poll', async () => {
    await register('u1');
    const { jobStream, upload } = await uploadFor('u1');
    const stream = ingestStream('u1', jobStream);
    const delivered = firstValueFrom(store.subscribeToAll({ after: await store.headPosition(), filter: { streamPrefixes: [stream] } }).pipe(take(5), toArray()));
    const outcome = await pool.run({ jobStream, upload });
    expect(outcome).toMatchObject({ kind: 'succeeded', records: { quantity: SAMPLES }, rejected: 0, types: ['heart_rate'] });
    const events = await delivered;
    expect(events.map((e) => e.streamRevision)).toEqual([0, 1, 2, 3, 4]);
    // Sealed by the thread with the user's data key for the provider (docs/erasure.md); opened as the projector opens them.
    expect(events.every((e) => !('records' in e.data) && 'sealed' in e.data)).toBe(true);
    const opener = new EventOpener(dataKeysOf(config, store));
    const opened = await Promise.all(events.map((e) => opener.open(e)));
    expect(opened.flatMap((e) => (e.data as { records: unknown[] }).records)).toHaveLength(SAMPLES);
  });

  it('answers a job whose user is being deleted with the discarded outcome, which survives the thread boundary', async () => {
    await register('u2');
    await store.appendToStream(userStream('u2'), [
      { type: 'user.deletion_requested', data: { user_id: 'u2', tenant_id: 't1', job_id: 'd1', external_ref: null, requested_at: '2026-03-01T00:00:00.000Z', requested_by: 'test' } },
    ]);
    const task = await uploadFor('u2');
    await expect(pool.run(task)).resolves.toEqual({ kind: 'discarded', reason: 'user deleted' });
    expect(await store.readStream(ingestStream('u2', task.jobStream))).toEqual([]);
  });

  it('normalises a native export on a thread that loaded no source at its start: a job\'s decoder loads at the first job that needs it (sourceLoaders.ts)', async () => {
    await register('u5');
    const header = 'Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info,Device Info,Source Device ID,Glucose Value (mg/dL),Insulin Value (u),Carb Value (grams),Duration (hh:mm:ss),Glucose Rate of Change (mg/dL/min),Transmitter Time (Long Integer)';
    const csv = Buffer.from([header, '1,,FirstName,,Jane,,,,,,,,', '2,,Device,,,Dexcom G6 Mobile App,iPhone G6,,,,,,', '3,2024-01-15 07:30:00,EGV,,,,iPhone G6,101,,,,,100', '4,2024-01-15 07:35:00,EGV,,,,iPhone G6,104,,,,,400'].join('\n') + '\n');
    const task = await uploadFor('u5', 'dexcom-clarity', csv, { content_type: 'text/csv', time_zone: 'Europe/Berlin' });
    await expect(pool.run(task)).resolves.toMatchObject({ kind: 'succeeded', records: { quantity: 2 }, rejected: 0 });
  });

  it('rejects a failed job with its message, for the retry path', async () => {
    await register('u3');
    const task = await uploadFor('u3', 'device-z');
    await expect(pool.run(task)).rejects.toThrow('no parser for device-z');
  });

  it('closes its threads (and their stores) on close, and starts new ones for a later job', async () => {
    const started = Date.now();
    await pool.close();
    // Well under the 5 s it would wait for threads that never answer: every thread closed its stores.
    expect(Date.now() - started).toBeLessThan(4_000);
    await pool.close();
    await register('u4');
    const task = await uploadFor('u4');
    await expect(pool.run(task)).resolves.toMatchObject({ kind: 'succeeded' });
  });
  it('waits on close for the thread started for one job alone to close its stores: nothing of it runs after the close answers', async () => {
    await register('u5');
    // Declared at the bulk size: the job runs on a thread of its own, closed once it has answered.
    const task = await uploadFor('u5', 'device-a', heartRateExport(SAMPLES), { bytes: BULK_UPLOAD_BYTES });
    // That thread's close (the first close asked for from here) is slowed: the pool's close must wait for it.
    const close = EtlThreadHandle.prototype.close;
    let slowed = false;
    let slowClosed = false;
    const spy = vi.spyOn(EtlThreadHandle.prototype, 'close').mockImplementation(async function (this: EtlThreadHandle) {
      if (slowed) return close.call(this);
      slowed = true;
      await new Promise((r) => setTimeout(r, 500));
      await close.call(this);
      slowClosed = true;
    });
    // Unpaced (no projector runs here to pace a bulk job), on a pool of its own.
    const own = new EtlThreadPool(loadConfig({ DATA_DIR: dataDir, ETL_BULK_PROJECTOR_LEAD: '0', LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv));
    try {
      await own.run(task).catch(() => {});
      expect(slowed, "the job's own thread was closed after its run").toBe(true);
      await own.close();
      expect(slowClosed, 'the pool closed before the thread of the job alone had').toBe(true);
    } finally {
      spy.mockRestore();
    }
  });
  it("starts a bulk job's thread only once the last bulk job's thread has closed: at most ETL_BULK_CONCURRENCY bulk threads' heaps at once", async () => {
    await register('u6');
    await register('u7');
    const first = await uploadFor('u6', 'device-a', heartRateExport(SAMPLES), { bytes: BULK_UPLOAD_BYTES });
    const second = await uploadFor('u7', 'device-a', heartRateExport(SAMPLES), { bytes: BULK_UPLOAD_BYTES });
    const events: string[] = [];
    const close = EtlThreadHandle.prototype.close;
    const run = EtlThreadHandle.prototype.run;
    let closes = 0;
    const closeSpy = vi.spyOn(EtlThreadHandle.prototype, 'close').mockImplementation(async function (this: EtlThreadHandle) {
      const n = ++closes;
      // The first job's thread is slow to close: the second job must wait for it.
      if (n === 1) await new Promise((r) => setTimeout(r, 500));
      await close.call(this);
      events.push(`closed ${n}`);
    });
    const runSpy = vi.spyOn(EtlThreadHandle.prototype, 'run').mockImplementation(function (this: EtlThreadHandle, ...args: Parameters<EtlThreadHandle['run']>) {
      events.push(`run ${args[0].upload.user_id}`);
      return run.apply(this, args);
    });
    const own = new EtlThreadPool(loadConfig({ DATA_DIR: dataDir, ETL_BULK_PROJECTOR_LEAD: '0', ETL_BULK_CONCURRENCY: '1', LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv));
    try {
      await Promise.all([own.run(first), own.run(second)]);
      expect(events.slice(0, 3)).toEqual(['run u6', 'closed 1', 'run u7']);
    } finally {
      await own.close();
      closeSpy.mockRestore();
      runSpy.mockRestore();
    }
  });
});
