/**
 * `npm run bench -- erasure-neighbours [--users=20 --per=10000 --every=100 --alone=10]`: erasure
 * without collateral (contracts §19, issue 35), on the service as `npm start` starts it. Tenant A
 * has `users` users of `per` device-a heart-rate samples each (200,000 by default); tenant B sends
 * a one-line device-a upload every `every` ms, first for `alone` seconds, then while tenant A
 * requests 10 user deletions and 10 provider erasures back to back and until all 20 jobs are done.
 * Reported: B's writes (POST to 202) and B's upload → readable, p50/p99/max, alone and during the
 * erasures; B's writes that failed; the erasures' own time (request → done, each and all).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { heartRateAt, percentile, printLatencyTable } from './support/deviceUploads.js';
import { json, machine, startService } from './support/service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const arg = (args: string[], name: string, fallback: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

export default async function erasureNeighbours(args: string[]): Promise<void> {
  const users = Number(arg(args, 'users', '20'));
  const per = Number(arg(args, 'per', '10000'));
  const every = Number(arg(args, 'every', '100'));
  const alone = Number(arg(args, 'alone', '10'));
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-erasure-neighbours-'));
  try {
    const svc = await startService(join(dir, 'svc'));
    try {
      console.log(`erasure-neighbours (tenant A: ${users} users × ${per.toLocaleString('en-US')} samples, half deleted, half provider-erased; tenant B one line every ${every} ms), ${machine()}`);
      const admin = { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json' };
      const tenant = async (name: string) => (await json<{ api_key: string }>(await fetch(`${svc.base}/v1/admin/tenants`, { method: 'POST', headers: admin, body: JSON.stringify({ name }) }))).api_key;
      const user = async (key: string) => {
        const tk = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
        const u = await json<{ id: string }>(await fetch(`${svc.base}/v1/users`, { method: 'POST', headers: tk, body: '{}' }));
        const { token } = await json<{ token: string }>(await fetch(`${svc.base}/v1/users/${u.id}/tokens`, { method: 'POST', headers: tk, body: '{"scopes":["upload"]}' }));
        return { tk, id: u.id, token };
      };
      const upload = async (token: string, uploadId: string, lines: string[]) => {
        const t0 = performance.now();
        const res = await fetch(`${svc.base}/v1/ingest/device-a`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'upload-id': uploadId, 'content-type': 'application/gzip' }, body: gzipSync(lines.join('\n')) });
        await res.arrayBuffer();
        return { status: res.status, ms: performance.now() - t0 };
      };
      const readable = async (who: { tk: Record<string, string>; id: string }, at: number) => {
        const q = new URLSearchParams({ type: 'heart_rate', view: 'all', start: new Date(at).toISOString(), end: new Date(at + 1000).toISOString(), limit: '1' });
        return (await json<{ data: unknown[] }>(await fetch(`${svc.base}/v1/users/${who.id}/samples?${q}`, { headers: who.tk }))).data.length > 0;
      };

      const keyA = await tenant('tenant-a');
      const aBase = Date.parse('2020-01-01T00:00:00.000Z');
      const usersOfA = [];
      const t0 = performance.now();
      for (let u = 0; u < users; u++) {
        const who = await user(keyA);
        const res = await upload(who.token, `a-${u}`, Array.from({ length: per }, (_, i) => heartRateAt(aBase + i * 60_000, i)));
        if (res.status !== 202) throw new Error(`tenant A's upload answered ${res.status}`);
        usersOfA.push(who);
      }
      for (const who of usersOfA) while (!(await readable(who, aBase + (per - 1) * 60_000))) await sleep(250);
      console.log(`tenant A's ${(users * per).toLocaleString('en-US')} samples readable after ${((performance.now() - t0) / 1000).toFixed(1)} s`);

      const b = await user(await tenant('tenant-b'));
      const writes = { alone: [] as number[], during: [] as number[] };
      const reads = { alone: [] as number[], during: [] as number[] };
      const phase = { current: 'alone' as 'alone' | 'during' | 'after' };
      let stop = false;
      let failed = 0;
      const pollers: Promise<void>[] = [];
      const bBase = Date.parse('2026-11-01T00:00:00.000Z');
      const bLoop = (async () => {
        for (let i = 0; !stop; i++) {
          const next = performance.now() + every;
          const at = bBase + i * 60_000;
          const sentIn = phase.current;
          const started = performance.now();
          const res = await upload(b.token, `b-${i}`, [heartRateAt(at, i)]);
          if (res.status !== 202) failed++;
          else if (sentIn !== 'after') {
            writes[sentIn].push(res.ms);
            pollers.push(
              (async () => {
                while (!(await readable(b, at))) await sleep(25);
                reads[sentIn].push(performance.now() - started);
              })(),
            );
          }
          await sleep(Math.max(0, next - performance.now()));
        }
      })();

      await sleep(alone * 1000);
      phase.current = 'during';
      const load0 = loadavg()[0]!;
      const started = performance.now();
      const jobs: { id: string; key: string; at: number }[] = [];
      for (const [n, who] of usersOfA.entries()) {
        const url = n < users / 2 ? `${svc.base}/v1/users/${who.id}` : `${svc.base}/v1/users/${who.id}/data/device-a`;
        const at = performance.now();
        const { job_id } = await json<{ job_id: string }>(await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${keyA}` } }));
        jobs.push({ id: job_id, key: keyA, at });
      }
      const took: number[] = [];
      for (const job of jobs) {
        for (;;) {
          const j = await json<{ status: string }>(await fetch(`${svc.base}/v1/deletions/${job.id}`, { headers: { authorization: `Bearer ${job.key}` } }));
          if (j.status === 'failed') throw new Error(`erasure ${job.id} failed`);
          if (j.status === 'done') break;
          await sleep(100);
        }
        took.push(performance.now() - job.at);
      }
      const all = performance.now() - started;
      phase.current = 'after';
      const load1 = loadavg()[0]!;
      stop = true;
      await bLoop;
      await Promise.all(pollers);

      printLatencyTable('tenant B one-line uploads', 'n', [
        [`written (POST → 202), alone (${alone} s)`, writes.alone],
        [`written (POST → 202), during the erasures (${(all / 1000).toFixed(0)} s)`, writes.during],
        ['readable, alone', reads.alone],
        ['readable, during the erasures', reads.during],
      ]);
      console.log(`\ntenant B writes that failed: ${failed}`);
      console.log(`tenant A: 10 deletions and 10 provider erasures all done after ${(all / 1000).toFixed(1)} s; each request → done p50 ${(percentile(took, 50) / 1000).toFixed(1)} s, max ${(Math.max(...took) / 1000).toFixed(1)} s`);
      console.log(`load average (1 min) at the erasures' start ${load0.toFixed(1)}, at their end ${load1.toFixed(1)}`);
    } finally {
      await svc.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
