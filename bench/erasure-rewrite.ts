/**
 * `npm run bench -- erasure-rewrite [--samples=1000000] [--users=20]`: what the last step of an
 * erasure costs on the embedded read store (docs/erasure.md, "Physical deletion"): the scrub
 * (`purgeDeleted`: the tables the erasure deleted from rebuilt a chunk at a time, in a thread of
 * its own) after one user's samples were deleted, beside a bare better-sqlite3 VACUUM and
 * checkpoint of a copy of the same file (the physical limit of a rewrite), how long another
 * writer waited meanwhile (one small write every 20 ms on the caller's thread, and the same on a
 * connection of the raw VACUUM's; p50 / p99 / max), and what a second erasure that deleted
 * nothing costs.
 */
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { samplesProjection } from '../projections/records/samplesProjection.js';
import { SqliteReadStore } from '../src/readstore/sqliteReadStore.js';
import { machine } from './support/service.js';

const BATCH = 20_000;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
const mb = (path: string) => (statSync(path).size / 1_048_576).toFixed(0);

/** Runs `work` (synchronous, on this thread) while a worker thread writes to `path` every 20 ms; answers its time and the writes' waits. */
async function writesDuring(path: string, work: () => void): Promise<{ ms: number; waits: number[] }> {
  const shared = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     const Database = require('better-sqlite3');
     const db = new Database(workerData.path);
     db.pragma('busy_timeout = 60000');
     db.exec('CREATE TABLE IF NOT EXISTS bench_writes (n INTEGER)');
     const flag = workerData.flag;
     const waits = [];
     parentPort.postMessage('ready');
     while (Atomics.load(flag, 0) === 0) {
       const t0 = performance.now();
       db.prepare('INSERT INTO bench_writes (n) VALUES (?)').run(waits.length);
       waits.push(performance.now() - t0);
       Atomics.wait(flag, 0, 0, 20);
     }
     parentPort.postMessage(waits);`,
    { eval: true, workerData: { path, flag: shared } },
  );
  await new Promise((resolve) => worker.once('message', resolve));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const t0 = performance.now();
  work();
  const ms = performance.now() - t0;
  Atomics.store(shared, 0, 1);
  Atomics.notify(shared, 0);
  const waits = await new Promise<number[]>((resolve) => worker.once('message', resolve));
  await worker.terminate();
  return { ms, waits };
}

export default async function main(args: string[]) {
  const arg = (name: string, dflt: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
  const samples = arg('samples', 1_000_000);
  const users = arg('users', 20);
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-erasure-rewrite-'));
  const path = join(dir, 'readmodels.sqlite');
  const store = new SqliteReadStore({ path });
  try {
    console.log(`machine: ${machine()}`);
    await store.ensureCollections(samplesProjection.collections);
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    for (let from = 0; from < samples; from += BATCH) {
      const docs = [];
      for (let i = from; i < Math.min(samples, from + BATCH); i++) {
        const at = new Date(start + Math.floor(i / users) * 60_000).toISOString();
        docs.push({
          _id: `k-${i.toString(36)}-${(i * 2_654_435_761 >>> 0).toString(36)}`, id: i, user_id: `user-${i % users}`, tenant_id: 't-bench', type: 'heart_rate',
          start_date: at, end_date: at, value: 50 + ((i * 7) % 90) + 0.25, unit: 'count/min', day: at.slice(0, 10), provider: 'device-a', source: 'Apple Watch',
          source_name: 'Apple Watch', source_bundle_id: 'com.apple.health', device_model: 'Watch', product_type: 'Watch7,1', was_user_entered: false,
          body_worn: true, external_id: `${i.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`, device: 'Apple Watch', ingested_at: '2026-11-26T00:00:00.000Z',
          hidden: false, excluded: false, quality: [],
        });
      }
      await store.applyChanges(docs.map((doc) => ({ op: 'put' as const, collection: 'samples', doc })));
    }
    await store.purgeDeleted({ rewrite: false });
    console.log(`${samples.toLocaleString('en')} samples of ${users} users: readmodels.sqlite ${mb(path)} MiB`);

    // One user's rows dropped, as the projections do on `user.erased`.
    await store.applyChanges([{ op: 'deleteMany', collection: 'samples', filter: { user_id: 'user-0' } }], { erasing: true });
    await store.purgeDeleted({ rewrite: false });
    const copy = join(dir, 'copy.sqlite');
    copyFileSync(path, copy);

    const waits: number[] = [];
    let writing = true;
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        const t0 = performance.now();
        await store.applyChanges([{ op: 'put', collection: 'samples', doc: { _id: `w-${n}`, id: -n, user_id: 'writer', tenant_id: 't', type: 'steps', start_date: '2026-01-01T00:00:00.000Z', day: '2026-01-01', value: n } }]);
        waits.push(performance.now() - t0);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const t0 = performance.now();
    const report = await store.purgeDeleted();
    const scrubMs = performance.now() - t0;
    writing = false;
    await writer;
    const t2 = performance.now();
    await store.purgeDeleted();
    const idleMs = performance.now() - t2;

    // The physical limit of a rewrite, and what a writer waits while the whole file is rewritten
    // under the lock (what erasure did before the scrub): the writer on a thread of its own.
    const raw = new Database(copy);
    const rawWaits = await writesDuring(copy, () => {
      raw.exec('VACUUM');
      raw.pragma('wal_checkpoint(TRUNCATE)');
    });
    raw.close();

    const fmt = (xs: number[]) => `${xs.length} writes, p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
    console.log(`after the scrub: ${mb(path)} MiB (${report?.transactions ?? '?'} transactions; the longest held the lock ${report?.longestHoldMs ?? '?'} ms, in its ${report?.longestHoldIn ?? '?'} step)\n`);
    console.log('| work | seconds | ratio to the raw VACUUM | another writer meanwhile |');
    console.log('|---|---:|---:|---|');
    console.log(`| purgeDeleted: scrub in its thread, log emptied | ${(scrubMs / 1000).toFixed(2)} | ${(rawWaits.ms / scrubMs).toFixed(2)} | ${fmt(waits)} |`);
    console.log(`| raw better-sqlite3: VACUUM + wal_checkpoint(TRUNCATE) of a copy | ${(rawWaits.ms / 1000).toFixed(2)} | 1 | ${fmt(rawWaits.waits)} |`);
    console.log(`| purgeDeleted again, nothing deleted since | ${(idleMs / 1000).toFixed(3)} | | |`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
