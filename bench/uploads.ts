/**
 * `npm run bench -- uploads [--users=200 --uploads=2000 --inflight=6]`: one-line device-a uploads
 * from many users, `inflight` at a time, to the service started as `npm start` starts it: the
 * phone-sync case (thousands of small batches rather than one big file). Reports uploads accepted
 * per second, the POST's p50/p99, and the time until every upload's ETL job finished (succeeded:
 * its records stored and `data.written` appended). Profile the service with
 * `BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/p"` to see where an upload's milliseconds go.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { cpuMsOf, json, machine, startService } from './support/service.js';
import { heartRateLine, percentile, waitForEtlJobs } from './support/deviceUploads.js';

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

    const latencies: number[] = [];
    const cpu0 = cpuMsOf(svc.child.pid);
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: inflight }, async () => {
        for (let i = next++; i < uploads; i = next++) {
          const t = performance.now();
          const res = await fetch(`${svc.base}/v1/ingest/device-a`, {
            method: 'POST',
            headers: { authorization: `Bearer ${tokens[i % users]}`, 'upload-id': `u-${i}`, 'content-type': 'application/gzip' },
            body: gzipSync(heartRateLine(i)),
          });
          if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
          await res.arrayBuffer();
          latencies.push(performance.now() - t);
        }
      }),
    );
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
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
