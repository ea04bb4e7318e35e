/**
 * `npm run bench -- erasure-rewrite [--samples=1000000] [--users=20]`: what the last step of an
 * erasure costs on the embedded read store (docs/erasure.md, "Physical deletion"): the file
 * rewritten from its live rows (`purgeDeleted`, a VACUUM in a thread of its own) after one user's
 * samples were deleted, beside the same VACUUM and checkpoint run by bare better-sqlite3 on a copy
 * of the same file (the physical limit), and how long the store's own writes waited meanwhile
 * (one small write every 50 ms on the caller's thread, which the rewrite leaves free; p50 / max).
 */
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { samplesProjection } from '../projections/records/samplesProjection.js';
import { SqliteReadStore } from '../src/readstore/sqliteReadStore.js';
import { machine } from './support/service.js';

const BATCH = 20_000;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
const mb = (path: string) => (statSync(path).size / 1_048_576).toFixed(0);

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
    await store.applyChanges([{ op: 'deleteMany', collection: 'samples', filter: { user_id: 'user-0' } }]);
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
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const t0 = performance.now();
    await store.purgeDeleted();
    const rewriteMs = performance.now() - t0;
    writing = false;
    await writer;

    const raw = new Database(copy);
    const t1 = performance.now();
    raw.exec('VACUUM');
    raw.pragma('wal_checkpoint(TRUNCATE)');
    const rawMs = performance.now() - t1;
    raw.close();

    console.log(`after the rewrite: ${mb(path)} MiB\n`);
    console.log('| work | seconds | ratio to the raw VACUUM |');
    console.log('|---|---:|---:|');
    console.log(`| purgeDeleted (rewrite in its thread, log emptied) | ${(rewriteMs / 1000).toFixed(2)} | ${(rawMs / rewriteMs).toFixed(2)} |`);
    console.log(`| raw better-sqlite3: VACUUM + wal_checkpoint(TRUNCATE) of a copy | ${(rawMs / 1000).toFixed(2)} | 1 |`);
    console.log(`\nthe store's writes during the rewrite: ${waits.length}, waited p50 ${pct(waits, 50).toFixed(1)} ms, max ${Math.max(...waits).toFixed(0)} ms`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
