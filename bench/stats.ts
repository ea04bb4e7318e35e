/**
 * `npm run bench -- stats [--days=365] [--reps=20] [--priorities=0] [--stats=0]`: statistics and merged reads over a year of
 * per-minute heart rate from two sources (Apple Watch and a Polar strap, 2 × 525,600 samples),
 * uploaded through device-a to the service started as `npm start` starts it.
 *
 * Timed over HTTP, p50/p99 of `reps` requests each: day statistics for the year and hour
 * statistics for a month, in Europe/Berlin and Asia/Kathmandu, both views; a page of 1,000
 * samples in both views; a priorities change (the PUT, then the next merged read). Next to each
 * statistics figure, in the same run: a brute-force grouping of the same samples, their blocks read
 * with raw better-sqlite3 from the service's own read-model file and decoded (the full view's: the
 * merged view's flags are state the brute force does not re-decide). Next to the pages: the raw
 * read of the blocks such a page needs (the first 4 of its day), their data parsed.
 *
 * `--stats=0` leaves out the statistics (the pages and the priorities change only): with `--days=30
 * --priorities=0` a loop over the pages takes seconds instead of minutes. `--pages=0` leaves out the
 * pages (a profile of the statistics alone).
 *
 * Each statistics row's first request is timed apart (its own column: wall ms and the service's CPU
 * ms at /proc's 10 ms resolution) and left out of the row's p50, p99 and CPU per request: the
 * service's first request of a kind compiles its code, prepares its statement and loads the zone
 * (tens of ms of CPU, once per process and zone), which with 20 requests would be a row's p99 and
 * a tenth of its CPU whatever the query costs afterwards.
 *
 * `--keep=<dir>` keeps the loaded service's data in <dir> and, when <dir> already holds a run's data
 * (of the same --days), starts the service on it without uploading again: the requests are then timed
 * (and profiled with BENCH_NODE_ARGS) without the ~2 minutes of ingest in front of them.
 *
 * Next to the pages, the HTTP path of a small authenticated read (GET /v1/users/{id}) and the bare
 * limit of the same run: a bare node:http server (a child process) sending the very bytes of the
 * last page the service answered, timed with the same client.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { DateTime } from 'luxon';
import { decodeBlock } from '../projections/records/sampleBlocks/sampleBlock.js';
import { benchUploader, cpuMsOf, json, machine, startService } from './support/service.js';

const SOURCES = [
  { source_name: 'Apple Watch', source_bundle_id: 'com.apple.health.1A2B3C', device_model: 'Watch', product_type: 'Watch7,1' },
  { source_name: 'Polar Flow', source_bundle_id: 'fi.polar.polarflow', device_model: 'H10', product_type: 'Polar H10' },
];

function uploads(days: number, parts: number): Buffer[] {
  const base = Date.parse('2025-11-01T00:00:00.000Z');
  const minutes = days * 1440;
  const per = Math.ceil(minutes / parts);
  const out: Buffer[] = [];
  for (let p = 0; p < parts; p++) {
    const lines: string[] = [];
    for (let m = p * per; m < Math.min(minutes, (p + 1) * per); m++) {
      const t = new Date(base + m * 60_000).toISOString();
      for (const [k, s] of SOURCES.entries()) {
        lines.push(
          JSON.stringify({ kind: 'quantity', uuid: randomUUID(), type: 'HKQuantityTypeIdentifierHeartRate', unit: 'count/min', value: 55 + ((m * 7 + k * 3) % 60), start_date: t, end_date: t, was_user_entered: false, metadata: { HKTimeZone: 'Europe/Berlin' }, ...s }),
        );
      }
    }
    out.push(gzipSync(lines.join('\n'), { level: 6 }));
  }
  return out;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/**
 * p50/p99 wall clock of `reps` requests, and the service's CPU time per request (all its
 * threads, from /proc): on a shared machine the wall clock moves with the neighbours, CPU much less.
 */
async function timed(reps: number, f: () => Promise<unknown>, pid?: number): Promise<{ p50: number; p99: number; cpu: number | null; last: unknown }> {
  const ms: number[] = [];
  let last: unknown;
  const cpu0 = cpuMsOf(pid);
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    last = await f();
    ms.push(performance.now() - t);
  }
  const cpu1 = cpuMsOf(pid);
  return { p50: pct(ms, 50), p99: pct(ms, 99), cpu: cpu0 !== null && cpu1 !== null ? (cpu1 - cpu0) / reps : null, last };
}
const cpuCell = (cpu: number | null) => (cpu === null ? 'n/a' : cpu.toFixed(1));

/**
 * Brute force over every sample: the blocks of the window's UTC days read raw and decoded (issue
 * 38: samples are stored in blocks; the full view's), each sample in the window assigned to its
 * local interval by a binary search of the interval boundaries of tz (computed once), grouped in a Map.
 */
function bruteForce(db: Database.Database, user: string, start: DateTime, end: DateTime, interval: 'day' | 'hour'): { ms: number; buckets: number; samples: number } {
  const t = performance.now();
  const bounds: number[] = [];
  for (let b = start; b < end; b = b.plus({ [interval === 'day' ? 'days' : 'hours']: 1 })) bounds.push(b.toMillis());
  bounds.push(end.toMillis());
  const [from, to] = [start.toMillis(), end.toMillis()];
  const blocks = db
    .prepare(`SELECT "f_data" FROM rm_sample_blocks WHERE "f_user_id" = ? AND "f_type" = 'heart_rate' AND "f_day" >= ? AND "f_day" <= ?`)
    .pluck(true)
    .iterate(user, start.toUTC().toISODate()!, end.toUTC().toISODate()!) as IterableIterator<string>;
  function* samplesOf(): Generator<[number, string, string, string, number]> {
    for (const data of blocks) for (const s of decodeBlock(data)) yield [Date.parse(s.start_date), s.provider, s.source, s.unit, s.value];
  }
  const acc = new Map<string, { n: number; sum: number; min: number; max: number }>();
  let samples = 0;
  for (const [ms, p, src, u, v] of samplesOf()) {
    if (ms < from || ms >= to) continue;
    samples++;
    let lo = 0;
    let hi = bounds.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (bounds[mid]! <= ms) lo = mid;
      else hi = mid;
    }
    const key = `${lo}|${p}|${src}|${u}`;
    const a = acc.get(key);
    if (a) {
      a.n++;
      a.sum += v;
      if (v < a.min) a.min = v;
      if (v > a.max) a.max = v;
    } else acc.set(key, { n: 1, sum: v, min: v, max: v });
  }
  return { ms: performance.now() - t, buckets: acc.size, samples };
}

export default async function main(args: string[]) {
  const arg = (name: string, dflt: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
  const days = arg('days', 365);
  const reps = arg('reps', 20);
  // --priorities=0 leaves out the source-order change (minutes on a loaded machine).
  const priorities = arg('priorities', 1) !== 0;
  const statistics = arg('stats', 1) !== 0;
  const pages = arg('pages', 1) !== 0;
  const keep = args.find((a) => a.startsWith('--keep='))?.slice('--keep='.length);
  if (keep) mkdirSync(keep, { recursive: true });
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'wellstream-bench-stats-'));
  const kept = join(dir, 'bench.json');
  try {
    console.log(`machine: ${machine()}`);
    const svcDir = join(dir, 'svc');
    const reused = keep && existsSync(kept) ? (JSON.parse(readFileSync(kept, 'utf8')) as { days: number; tk: { authorization: string; 'content-type': string }; userId: string }) : null;
    if (reused && reused.days !== days) throw new Error(`${dir} holds a run of --days=${reused.days}`);
    const svc = await startService(svcDir);
    try {
      const { tk, userId, token: uploadToken } = reused ? { ...reused, token: '' } : await benchUploader(svc);
      const user = { id: userId };
      const token = { token: uploadToken };
      const t0 = performance.now();
      for (const [p, body] of reused ? [] : uploads(days, 10).entries()) {
        const form = new FormData();
        form.append('file', new Blob([body], { type: 'application/gzip' }), `hr-${p}.ndjson.gz`);
        const res = await fetch(`${svc.base}/v1/ingest/device-a`, { method: 'POST', headers: { authorization: `Bearer ${token.token}`, 'upload-id': `stats-${p}` }, body: form });
        if (res.status !== 202) throw new Error(`upload answered ${res.status}`);
      }
      const total = days * 1440 * 2;
      const lastMinute = new Date(Date.parse('2025-11-01T00:00:00.000Z') + (days * 1440 - 1) * 60_000).toISOString();
      for (;;) {
        await new Promise((r) => setTimeout(r, 500));
        const q = new URLSearchParams({ type: 'heart_rate', view: 'all', start: lastMinute, limit: '10' });
        const page = await json<{ data: unknown[] }>(await fetch(`${svc.base}/v1/users/${user.id}/samples?${q}`, { headers: tk }));
        if (page.data.length === 2) break;
      }
      // Merged flags and rollups are written in the transaction that stores the samples: they are current the moment the samples are queryable.
      if (reused) console.log(`${total} samples of ${dir} (kept from an earlier run)\n`);
      else console.log(`${total} samples queryable (merged flags and rollups included) after ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
      if (keep && !reused) writeFileSync(kept, JSON.stringify({ days, tk, userId }));

      const db = new Database(join(svcDir, 'readmodels.sqlite'), { readonly: true });
      const stats = (qs: Record<string, string>) => async () => json<{ truncated: boolean; buckets: { count: number }[] }>(await fetch(`${svc.base}/v1/users/${user.id}/samples/stats?${new URLSearchParams({ type: 'heart_rate', ...qs })}`, { headers: tk }));
      const year = { start: '2025-11-01', end: DateTime.fromISO('2025-11-01').plus({ days }).toISODate()! };
      const month = { start: '2026-03-01', end: '2026-04-01' };
      const pid = svc.child.pid;
      if (statistics) {
        console.log('| query | view | tz | p50 ms | p99 ms | service CPU ms / request | first request: wall ms (CPU ms) | buckets | samples counted | brute force ms | brute force / ours |');
        console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
      }
      for (const [label, w, interval] of statistics ? ([['day statistics, the year', year, 'day'], ['hour statistics, a month', month, 'hour']] as const) : []) {
        for (const tz of ['Europe/Berlin', 'Asia/Kathmandu']) {
          const brute = bruteForce(db, user.id, DateTime.fromISO(w.start, { zone: tz }), DateTime.fromISO(w.end, { zone: tz }), interval);
          for (const view of ['all', 'merged']) {
            // Both views the same number of requests: the CPU column's resolution is /proc's 10 ms over `reps`.
            const first = await timed(1, stats({ start: w.start, end: w.end, interval, tz, view }), pid);
            const r = await timed(reps, stats({ start: w.start, end: w.end, interval, tz, view }), pid);
            const body = r.last as { truncated: boolean; buckets: { count: number }[] };
            const counted = body.buckets.reduce((n, b) => n + b.count, 0);
            console.log(`| ${label} | ${view} | ${tz} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} | ${cpuCell(r.cpu)} | ${first.p50.toFixed(0)} (${cpuCell(first.cpu)}) | ${body.buckets.length}${body.truncated ? ' (truncated)' : ''} | ${counted} | ${brute.ms.toFixed(0)} (${brute.buckets} buckets, ${brute.samples} samples) | ${(brute.ms / r.p50).toFixed(0)}× |`);
          }
        }
      }
      // The pages start on 2026-03-01 (a year's run), or half way through a shorter run's data.
      const pageStart = days >= 150 ? '2026-03-01' : new Date(Date.parse('2025-11-01T00:00:00.000Z') + Math.floor(days / 2) * 86_400_000).toISOString().slice(0, 10);
      const rawPage = !pages ? 0 : (() => {
        const t = performance.now();
        // The blocks a page of 1,000 from pageStart needs (each source's first of the day and the next), read and parsed.
        for (let i = 0; i < reps; i++) {
          const rows = db.prepare(`SELECT * FROM rm_sample_blocks WHERE "f_user_id" = ? AND "f_type" = 'heart_rate' AND "f_day" >= ? ORDER BY "f_day", "f_start_min", _id LIMIT 4`).raw(true).all(user.id, pageStart) as unknown[][];
          for (const r of rows) for (const v of r) if (typeof v === 'string' && v.startsWith('{')) JSON.parse(v);
        }
        return (performance.now() - t) / reps;
      })();
      console.log(`\nload average before the pages: ${loadavg().map((l) => l.toFixed(2)).join(', ')}`);
      console.log('\n| a page of 1,000 samples | p50 ms | p99 ms | service CPU ms / request | raw read of the blocks of the page (better-sqlite3 + JSON.parse) ms |');
      console.log('|---|---:|---:|---:|---:|');
      let lastPage = null as { bytes: Buffer; type: string } | null;
      for (const view of pages ? ['all', 'merged'] : []) {
        const r = await timed(
          reps,
          async () => {
            const res = await fetch(`${svc.base}/v1/users/${user.id}/samples?${new URLSearchParams({ type: 'heart_rate', start: pageStart, limit: '1000', view })}`, { headers: tk });
            if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
            lastPage = { bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') ?? '' };
            return JSON.parse(lastPage.bytes.toString('utf8'));
          },
          pid,
        );
        console.log(`| view=${view} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${cpuCell(r.cpu)} | ${rawPage.toFixed(1)} |`);
      }
      // The fixed cost of an authenticated read in the same run: the user's own small document.
      const fixed = !pages ? null : await timed(reps, async () => json(await fetch(`${svc.base}/v1/users/${user.id}`, { headers: tk })), pid);
      if (fixed) console.log(`| GET /v1/users/{id} (the HTTP path of a small authenticated read) | ${fixed.p50.toFixed(1)} | ${fixed.p99.toFixed(1)} | ${cpuCell(fixed.cpu)} | |`);
      if (lastPage) {
        const bare = await bareServer(dir, lastPage);
        try {
          const r = await timed(reps, async () => JSON.parse(Buffer.from(await (await fetch(bare.base, { headers: tk })).arrayBuffer()).toString('utf8')), bare.pid);
          console.log(`| bare limit: node:http sending the last page's ${lastPage.bytes.length} bytes | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${cpuCell(r.cpu)} | |`);
        } finally {
          bare.stop();
        }
      }
      // A new order re-evaluates the merged flags and rollups of every heart-rate sample of the
      // user before the PUT answers (read-your-writes); the second PUT turns it back.
      for (const order of priorities ? [['polar', 'apple'], ['apple', 'polar']] : []) {
        const t1 = performance.now();
        await json(await fetch(`${svc.base}/v1/users/${user.id}/source-priorities`, { method: 'PUT', headers: tk, body: JSON.stringify({ priorities: { heart_rate: order } }) }));
        const put = performance.now() - t1;
        const after = await json<{ data: { source_name: string }[] }>(await fetch(`${svc.base}/v1/users/${user.id}/samples?${new URLSearchParams({ type: 'heart_rate', start: '2026-03-01', limit: '5' })}`, { headers: tk }));
        console.log(`priorities change to ${order.join(' > ')}: re-evaluated and answered in ${(put / 1000).toFixed(1)} s; the next merged page lists ${after.data[0]?.source_name ?? 'nothing'}`);
      }
      db.close();
    } finally {
      await svc.stop();
    }
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** A bare node:http server in a child process answering every request with `page`'s bytes (the HTTP path's floor). */
async function bareServer(dir: string, page: { bytes: Buffer; type: string }): Promise<{ base: string; pid: number | undefined; stop: () => void }> {
  const file = join(dir, 'bare-page.json');
  writeFileSync(file, page.bytes);
  const code = `const b=require('fs').readFileSync(${JSON.stringify(file)});require('http').createServer((q,s)=>{s.writeHead(200,{'content-type':${JSON.stringify(page.type)},'content-length':b.length});s.end(b)}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('error', reject);
  });
  return { base: `http://127.0.0.1:${port}/`, pid: child.pid, stop: () => child.kill('SIGTERM') };
}
