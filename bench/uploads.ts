/**
 * `npm run bench -- uploads [--users=200 --uploads=2000 --inflight=6]`: one-line device-a uploads
 * from many users, `inflight` at a time, to the service started as `npm start` starts it: the
 * phone-sync case (thousands of small batches rather than one big file). Reports uploads accepted
 * per second, the POST's p50/p99, and the time until every upload's ETL job finished (succeeded:
 * its records stored and `data.written` appended). Profile the service with
 * `BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/p"` to see where an upload's milliseconds go.
 */
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { cpuMsOf, json, machine, startService } from './support/service.js';
import { heartRateLine, percentile, uploadOneLiners, waitForEtlJobs } from './support/deviceUploads.js';

export default async function main(args: string[]) {
  const arg = (name: string, dflt: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
  const users = arg('users', 200);
  const uploads = arg('uploads', 2000);
  const inflight = arg('inflight', 6);
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-uploads-'));
  const svc = await startService(dir);
  try {
    console.log(`machine: ${machine()}`);
    const admin = { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json' };
    const tenant = await json<{ api_key: string }>(await fetch(`${svc.base}/v1/admin/tenants`, { method: 'POST', headers: admin, body: '{"name":"bench"}' }));
    const tk = { authorization: `Bearer ${tenant.api_key}`, 'content-type': 'application/json' };
    const tokens: string[] = [];
    for (let i = 0; i < users; i++) {
      const user = await json<{ id: string }>(await fetch(`${svc.base}/v1/users`, { method: 'POST', headers: tk, body: '{}' }));
      tokens.push((await json<{ token: string }>(await fetch(`${svc.base}/v1/users/${user.id}/tokens`, { method: 'POST', headers: tk, body: '{"scopes":["upload"]}' }))).token);
    }

    const cpu0 = cpuMsOf(svc.child.pid);
    const t0 = performance.now();
    const { latencies } = await uploadOneLiners(`${svc.base}/v1/ingest/device-a`, (i) => tokens[i % users]!, uploads, inflight, 'u');
    const acceptedMs = performance.now() - t0;
    await waitForEtlJobs(svc.base, tk, t0);
    const doneMs = performance.now() - t0;
    const cpu1 = cpuMsOf(svc.child.pid);
    console.log(`\n| ${uploads} one-line uploads, ${users} users, ${inflight} in flight | figure |`);
    console.log('|---|---:|');
    console.log(`| accepted (202) per second | ${Math.round(uploads / (acceptedMs / 1000))} |`);
    console.log(`| POST /v1/ingest p50 / p99 ms | ${percentile(latencies, 50).toFixed(1)} / ${percentile(latencies, 99).toFixed(1)} |`);
    console.log(`| all ETL jobs finished after (s) | ${(doneMs / 1000).toFixed(1)} |`);
    console.log(`| processed per second (accepted → ETL done) | ${Math.round(uploads / (doneMs / 1000))} |`);
    if (cpu0 !== null && cpu1 !== null) console.log(`| service CPU time per upload, all threads (ms) | ${((cpu1 - cpu0) / uploads).toFixed(1)} |`);
    const rawMs = rawDurableUploads(join(dir, 'raw-limit'), uploads);
    console.log(`| raw limit: one at a time, payload file fsynced + renamed + directory fsynced, then one fsynced SQLite row (per second) | ${Math.round(uploads / (rawMs / 1000))} |`);
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The disk's floor for durable small uploads in the same run: for each upload, its payload
 * written to a file, fsynced, renamed into place and the directory fsynced, then one row inserted
 * in a WAL SQLite file with synchronous=FULL; one upload at a time, nothing shared. Answers ms.
 */
function rawDurableUploads(dir: string, n: number): number {
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, 'raw.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE uploads (id TEXT PRIMARY KEY, data TEXT NOT NULL)');
  const insert = db.prepare<[string, string]>('INSERT INTO uploads (id, data) VALUES (?, ?)');
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const body = gzipSync(heartRateLine(i));
    const fd = openSync(join(dir, `u-${i}.tmp`), 'w');
    writeSync(fd, body);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(join(dir, `u-${i}.tmp`), join(dir, `u-${i}`));
    const dfd = openSync(dir, 'r');
    fsyncSync(dfd);
    closeSync(dfd);
    insert.run(`u-${i}`, JSON.stringify({ upload_id: `u-${i}`, bytes: body.length }));
  }
  const ms = performance.now() - t0;
  db.close();
  return ms;
}
