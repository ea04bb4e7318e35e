/**
 * `npm run bench -- load [--seconds=300 --users=1000 --every=60 --readers=4 --read-every=250 --import-lines=1000000]`:
 * mixed load on the service started as `npm start` starts it (issue 27). For `seconds`:
 * - `users` users each upload a small device-a batch (5 lines) every `every` seconds, spread evenly;
 * - `readers` readers, each once every `read-every` ms (0: back to back, which saturates the HTTP
 *   thread with reads), ask for a page of 1,000 samples (both views) and the day statistics
 *   of a month of a reader user whose 20,160 samples (two weeks of minutes from two sources) were
 *   stored before the clock started, and for one of the users;
 * - 5 webhook endpoints on a local receiver get every event;
 * - at a third of the run, one more user uploads `import-lines` lines in one upload.
 * Reported: per route p50/p99 and errors (a 429 is counted and retried after its Retry-After),
 * upload accepted → its `data.written` delivered to the first endpoint p50/p99 (matched per user in
 * order), before the import, while it is processed and after, deliveries/s, the import's time to
 * accepted and to all queryable, the service's peak resident memory.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { freePort, json, machine, startService } from './support/service.js';

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : 0;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const BUNDLES: Record<string, string> = { 'Apple Watch': 'com.apple.health.1A2B3C', 'Polar Flow': 'fi.polar.polarflow' };

function lines(n: number, fromMs: number, source = 'Apple Watch'): Buffer {
  const offset = source === 'Apple Watch' ? 0 : 3;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const t = new Date(fromMs + i * 60_000).toISOString();
    out.push(JSON.stringify({ kind: 'quantity', uuid: randomUUID(), type: 'HKQuantityTypeIdentifierHeartRate', unit: 'count/min', value: 55 + ((i + offset) % 60), start_date: t, end_date: t, source_name: source, source_bundle_id: BUNDLES[source] }));
  }
  return gzipSync(out.join('\n'));
}

export default async function main(args: string[]) {
  const arg = (name: string, dflt: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
  const seconds = arg('seconds', 300);
  const userCount = arg('users', 1000);
  const every = arg('every', 60);
  const readers = arg('readers', 4);
  const readEvery = arg('read-every', 250);
  const importLines = arg('import-lines', 1_000_000);
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-load-'));
  const routes = new Map<string, { ms: number[]; errors: number; throttled: number }>();
  const record = (route: string, ms: number, status: number) => {
    let r = routes.get(route);
    if (!r) routes.set(route, (r = { ms: [], errors: 0, throttled: 0 }));
    if (status === 429) r.throttled++;
    else if (status >= 400) r.errors++;
    else r.ms.push(ms);
  };
  const call = async (route: string, url: string, init: RequestInit = {}): Promise<Response> => {
    for (;;) {
      const t = performance.now();
      const res = await fetch(url, init);
      record(route, performance.now() - t, res.status);
      if (res.status !== 429) return res;
      await res.arrayBuffer();
      await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
    }
  };

  // The receiver: every delivery counted; `data.written` to the first endpoint matched to its user's oldest pending upload.
  const pendingByUser = new Map<string, number[]>();
  /** Upload accepted → `data.written` delivered, by when the upload was sent relative to the import. */
  const delivered = { before: [] as number[], while: [] as number[], after: [] as number[] };
  const importWindow = { from: Infinity, to: Infinity };
  const phaseOf = (t: number) => (t < importWindow.from ? 'before' : t < importWindow.to ? 'while' : 'after');
  let deliveries = 0;
  const receiverPort = await freePort();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries++;
      if (req.url === '/hook/0') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { user_id: string } };
        const started = body.type === 'data.written' ? pendingByUser.get(body.data.user_id)?.shift() : undefined;
        if (started !== undefined) delivered[phaseOf(started)].push(performance.now() - started);
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(receiverPort, '127.0.0.1', r));

  const svc = await startService(join(dir, 'svc'), { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  try {
    console.log(`machine: ${machine()}`);
    const admin = { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json' };
    const tenant = await json<{ api_key: string }>(await fetch(`${svc.base}/v1/admin/tenants`, { method: 'POST', headers: admin, body: '{"name":"load"}' }));
    const tk = { authorization: `Bearer ${tenant.api_key}`, 'content-type': 'application/json' };
    for (let e = 0; e < 5; e++) {
      await json(await fetch(`${svc.base}/v1/webhooks`, { method: 'POST', headers: tk, body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook/${e}` }) }));
    }
    const users: { id: string; token: string }[] = [];
    for (let i = 0; i < userCount + 1; i++) {
      const u = await json<{ id: string }>(await fetch(`${svc.base}/v1/users`, { method: 'POST', headers: tk, body: '{}' }));
      users.push({ id: u.id, token: (await json<{ token: string }>(await fetch(`${svc.base}/v1/users/${u.id}/tokens`, { method: 'POST', headers: tk, body: '{"scopes":["upload"]}' }))).token });
    }
    const importer = users.pop()!;
    // The readers' user: two weeks of minutes from two sources, stored before the clock starts, so
    // every page read is a full page of 1,000 and the merged view has overlaps to decide.
    const readerUser = await json<{ id: string }>(await fetch(`${svc.base}/v1/users`, { method: 'POST', headers: tk, body: '{}' }));
    const readerToken = (await json<{ token: string }>(await fetch(`${svc.base}/v1/users/${readerUser.id}/tokens`, { method: 'POST', headers: tk, body: '{"scopes":["upload"]}' }))).token;
    const seedFrom = Date.parse('2025-06-01T00:00:00.000Z');
    for (const [k, source] of ['Apple Watch', 'Polar Flow'].entries()) {
      const res = await fetch(`${svc.base}/v1/ingest/device-a`, {
        method: 'POST',
        headers: { authorization: `Bearer ${readerToken}`, 'upload-id': `seed-${k}`, 'content-type': 'application/gzip' },
        body: lines(14 * 1440, seedFrom, source),
      });
      if (res.status !== 202) throw new Error(`seed upload answered ${res.status}`);
    }
    const seedLast = new Date(seedFrom + (14 * 1440 - 1) * 60_000).toISOString();
    for (;;) {
      const q = new URLSearchParams({ type: 'heart_rate', view: 'all', start: seedLast, limit: '2' });
      if ((await json<{ data: unknown[] }>(await fetch(`${svc.base}/v1/users/${readerUser.id}/samples?${q}`, { headers: tk }))).data.length === 2) break;
      await sleep(200);
    }
    await json(await fetch(`${svc.base}/v1/admin/runtime/reset`, { method: 'POST', headers: { authorization: admin.authorization } }));
    console.log(`${userCount} users uploading 5 lines every ${every} s, ${readers} readers every ${readEvery} ms, 5 webhook endpoints, a ${importLines}-line import at ${Math.round(seconds / 3)} s; ${seconds} s\n`);

    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    const base = Date.parse('2026-10-01T00:00:00.000Z');
    const uploader = async (u: { id: string; token: string }, index: number) => {
      await sleep(((index / userCount) * every * 1000) % (every * 1000));
      for (let round = 0; performance.now() < end; round++) {
        const next = performance.now() + every * 1000;
        const started = performance.now();
        const res = await call('POST /v1/ingest/device-a (5 lines)', `${svc.base}/v1/ingest/device-a`, {
          method: 'POST',
          headers: { authorization: `Bearer ${u.token}`, 'upload-id': `l-${round}`, 'content-type': 'application/gzip' },
          body: lines(5, base + round * 5 * 60_000),
        });
        await res.arrayBuffer();
        if (res.status === 202) pendingByUser.set(u.id, [...(pendingByUser.get(u.id) ?? []), started]);
        await sleep(Math.max(0, next - performance.now()));
      }
    };
    const reader = async (r: number) => {
      for (let i = r; performance.now() < end; i++) {
        const next = performance.now() + readEvery;
        const u = users[i % users.length]!;
        // A page of 1,000 of the reader user's samples, from a different minute each time.
        const start = new Date(seedFrom + ((i * 997) % (13 * 1440)) * 60_000).toISOString();
        for (const view of ['all', 'merged']) {
          const q = new URLSearchParams({ type: 'heart_rate', view, start, limit: '1000' });
          const page = await json<{ data: unknown[] }>(await call(`GET samples page of 1,000 (${view})`, `${svc.base}/v1/users/${readerUser.id}/samples?${q}`, { headers: tk }));
          if (page.data.length !== 1000) throw new Error(`a page of ${page.data.length} samples, not 1,000`);
        }
        const s = new URLSearchParams({ type: 'heart_rate', start: '2025-06-01', end: '2025-07-01', interval: 'day', tz: 'Europe/Berlin' });
        await (await call('GET samples/stats (a month of days)', `${svc.base}/v1/users/${readerUser.id}/samples/stats?${s}`, { headers: tk })).arrayBuffer();
        await (await call('GET /v1/users/{id}', `${svc.base}/v1/users/${u.id}`, { headers: tk })).arrayBuffer();
        await sleep(Math.max(0, next - performance.now()));
      }
    };
    let importMs: number | null = null;
    let importAcceptedMs: number | null = null;
    const importRun = (async () => {
      await sleep((seconds / 3) * 1000);
      const body = lines(importLines, Date.parse('2024-01-01T00:00:00.000Z'), 'Polar Flow');
      const started = performance.now();
      importWindow.from = started;
      const form = new FormData();
      form.append('file', new Blob([body], { type: 'application/gzip' }), 'import.ndjson.gz');
      const res = await call('POST /v1/ingest/device-a (import)', `${svc.base}/v1/ingest/device-a`, { method: 'POST', headers: { authorization: `Bearer ${importer.token}`, 'upload-id': 'import' }, body: form });
      if (res.status !== 202) return;
      importAcceptedMs = performance.now() - started;
      const last = new Date(Date.parse('2024-01-01T00:00:00.000Z') + (importLines - 1) * 60_000).toISOString();
      for (;;) {
        const q = new URLSearchParams({ type: 'heart_rate', view: 'all', start: last, limit: '1' });
        const page = await json<{ data: unknown[] }>(await fetch(`${svc.base}/v1/users/${importer.id}/samples?${q}`, { headers: tk }));
        if (page.data.length) break;
        await sleep(500);
      }
      importMs = performance.now() - started;
      importWindow.to = performance.now();
    })();
    await Promise.all([...users.map((u, i) => uploader(u, i)), ...Array.from({ length: readers }, (_, r) => reader(r)), importRun]);
    // Deliveries of the last uploads may still be on their way: wait a little for them.
    await sleep(5_000);
    const runtime = await json<{ max_rss_bytes: number }>(await fetch(`${svc.base}/v1/admin/runtime`, { headers: { authorization: admin.authorization } }));

    console.log('| route | requests | p50 ms | p99 ms | errors | 429 (retried) |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const [route, r] of routes) console.log(`| ${route} | ${r.ms.length} | ${percentile(r.ms, 50).toFixed(1)} | ${percentile(r.ms, 99).toFixed(1)} | ${r.errors} | ${r.throttled} |`);
    const undelivered = [...pendingByUser.values()].reduce((n, l) => n + l.length, 0);
    console.log('\n| small uploads sent | accepted → `data.written` delivered (first endpoint), matched | p50 ms | p99 ms |');
    console.log('|---|---:|---:|---:|');
    for (const [phase, ms] of Object.entries(delivered)) console.log(`| ${phase} the import was processed | ${ms.length} | ${percentile(ms, 50).toFixed(0)} | ${percentile(ms, 99).toFixed(0)} |`);
    console.log(`uploads whose data.written had not arrived 5 s after the end: ${undelivered}`);
    console.log(`webhook deliveries received (5 endpoints): ${deliveries}, ${(deliveries / ((performance.now() - t0) / 1000)).toFixed(0)}/s`);
    const secs = (ms: number | null) => (ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`);
    console.log(`import of ${importLines} lines: accepted after ${secs(importAcceptedMs)}, all queryable after ${importMs === null ? 'the end (not yet)' : secs(importMs)}`);
    console.log(`peak resident memory of the service: ${(runtime.max_rss_bytes / 2 ** 20).toFixed(0)} MiB`);
  } finally {
    await svc.stop();
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
