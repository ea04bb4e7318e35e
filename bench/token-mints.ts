/**
 * `npm run bench -- token-mints [--mints=100000 --uploads=300 --inflight=2 --legacy]` (issue 26 point 3): the
 * same N one-line device-a uploads, and the ETL completing them, for a fresh user and for a user
 * with `mints` user tokens minted before, to the service started as `npm start` starts it. Beside
 * them, in the same run, the raw limit: the same POSTs (gzip body read and unzipped, 202) to a bare
 * node:http server in this process, which no service can beat on this machine.
 *
 * The mints are seeded by appending, from this process, exactly the events the mint command writes
 * (`seedMints`), in batches: minting 100,000 tokens one by one through the API is itself the cost
 * being measured here and would take hours before the change. One more token is then minted through
 * the API for each user and used for the uploads. `--legacy` seeds the mints on the user's own
 * stream, where tokens minted before the token stream existed still are (issue 26 point 3).
 */
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { SqliteEventStore } from '../src/eventstore/sqliteEventStore.js';
import { cpuMsOf, json, machine, startService, type RunningService } from './support/service.js';
import { percentile, uploadOneLiners, waitForEtlJobs } from './support/deviceUploads.js';
import { seedMints } from './support/seedMints.js';

type Figures = { perSecond: number; p50: number; p99: number; doneS: number; cpuPerUpload: number | null };

/** The raw limit: a bare HTTP server that reads and unzips the body and answers 202. */
async function rawLimit(uploads: number, inflight: number): Promise<Figures> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      gunzipSync(Buffer.concat(chunks));
      res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const { ms, latencies } = await uploadOneLiners(`http://127.0.0.1:${port}/v1/ingest/device-a`, () => 'svc_ut_raw', uploads, inflight, 'raw');
    return { perSecond: uploads / (ms / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), doneS: ms / 1000, cpuPerUpload: null };
  } finally {
    await new Promise((r) => server.close(r));
  }
}

async function serviceRun(svc: RunningService, tk: Record<string, string>, token: string, uploads: number, inflight: number, tag: string): Promise<Figures> {
  const cpu0 = cpuMsOf(svc.child.pid);
  const t0 = performance.now();
  const { ms, latencies } = await uploadOneLiners(`${svc.base}/v1/ingest/device-a`, () => token, uploads, inflight, tag);
  await waitForEtlJobs(svc.base, tk, t0, 50);
  const doneMs = performance.now() - t0;
  const cpu1 = cpuMsOf(svc.child.pid);
  return {
    perSecond: uploads / (ms / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    doneS: doneMs / 1000,
    cpuPerUpload: cpu0 !== null && cpu1 !== null ? (cpu1 - cpu0) / uploads : null,
  };
}

export default async function main(args: string[]) {
  const arg = (name: string, dflt: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
  const mints = arg('mints', 100_000);
  const uploads = arg('uploads', 300);
  const inflight = arg('inflight', 2);
  const legacy = args.includes('--legacy');
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-tokenmints-'));
  const svc = await startService(dir);
  const store = new SqliteEventStore({ path: join(dir, 'events.sqlite') });
  try {
    console.log(`machine: ${machine()}`);
    const admin = { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json' };
    const tenant = await json<{ tenant_id: string; api_key: string }>(await fetch(`${svc.base}/v1/admin/tenants`, { method: 'POST', headers: admin, body: '{"name":"bench"}' }));
    const tk = { authorization: `Bearer ${tenant.api_key}`, 'content-type': 'application/json' };
    const newUser = async () => (await json<{ id: string }>(await fetch(`${svc.base}/v1/users`, { method: 'POST', headers: tk, body: '{}' }))).id;
    const mint = async (userId: string) => {
      const t = performance.now();
      const token = (await json<{ token: string }>(await fetch(`${svc.base}/v1/users/${userId}/tokens`, { method: 'POST', headers: tk, body: '{"scopes":["upload"]}' }))).token;
      return { token, ms: performance.now() - t };
    };
    const fresh = await newUser();
    const loaded = await newUser();
    const s0 = performance.now();
    await seedMints(store, { tenantId: tenant.tenant_id, userId: loaded, count: mints, legacy });
    const seedS = (performance.now() - s0) / 1000;
    // The first mint after the seed also waits for the users projection to take in the seeded tokens;
    // the figures are of the mint after it.
    const loadedToken = await mint(loaded);
    const loadedMint2 = await mint(loaded);
    const freshToken = await mint(fresh);

    const raw = await rawLimit(uploads, inflight);
    const a = await serviceRun(svc, tk, freshToken.token, uploads, inflight, 'fresh');
    const b = await serviceRun(svc, tk, loadedToken.token, uploads, inflight, 'loaded');

    console.log(`\nseeded ${mints} token mints in ${seedS.toFixed(1)} s; one more mint through the API: fresh user ${freshToken.ms.toFixed(0)} ms, loaded user ${loadedMint2.ms.toFixed(0)} ms`);
    console.log(`\n| ${uploads} one-line uploads, ${inflight} in flight | uploads/s | POST p50 / p99 ms | ETL all done (s) | service CPU ms/upload | time vs raw limit |`);
    console.log('|---|---:|---:|---:|---:|---:|');
    const row = (name: string, f: Figures) =>
      console.log(
        `| ${name} | ${Math.round(f.perSecond)} | ${f.p50.toFixed(1)} / ${f.p99.toFixed(1)} | ${f.doneS.toFixed(1)} | ${f.cpuPerUpload === null ? '-' : f.cpuPerUpload.toFixed(1)} | ${(f.doneS / raw.doneS).toFixed(1)}x |`,
      );
    row('raw limit (bare node:http, gunzip, 202)', raw);
    row('fresh user', a);
    row(`user with ${mints} token mints${legacy ? ' on the user stream (before the token stream)' : ''}`, b);
    console.log(`\nloaded / fresh, time until every ETL job finished: ${(b.doneS / a.doneS).toFixed(2)}x`);
  } finally {
    await store.close();
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
