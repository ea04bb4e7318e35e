/**
 * `npm run bench -- ingest [--lines=1000000] [--parts=10] [--keep] [--rebuild-of=DATA_DIR] [--pipeline]`: N device-a (HealthKit) lines —
 * heart rate from two sources and steps — uploaded as `parts` gzip uploads to the service
 * started as `npm start` starts it, timed from the first request to every record queryable.
 *
 * Reported next to each other, all from the same run:
 * - stages: uploads accepted; ETL done (every job finished); all records queryable;
 * - the physical limit: raw better-sqlite3 inserts of the same rows into a table of a key, a JSON
 *   column and one (user, type, start) index, one transaction per 20,000 rows (issue 27's, fixed);
 * - the HTTP thread under that load: event-loop delay p99 (the service's own
 *   monitorEventLoopDelay, reset before the first upload) and `GET /v1/users/{id}` latency p99,
 *   requested every 100 ms during the whole ingest;
 * - bytes per sample in DATA_DIR, by file (raw payloads, events, read models), and peak RSS;
 * - `npm run cli -- projections rebuild` of the read models afterwards, timed (wall and CPU), and
 *   the digest of every read model before and after it (a rebuild must equal the live state);
 *   `--rebuild-of=DATA_DIR` runs only that, on a DATA_DIR a run kept (rebuilt in place); `--keep`
 *   keeps the live read models too, as readmodels-live.sqlite, and a difference names its collections.
 *   `--pipeline` rebuilds with `projections rebuild --pipeline` (the replay's writes on a store thread).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { recordKey } from '../projections/records/recordIds.js';
import { createContext } from '../src/app/context.js';
import { createLogger } from '../src/app/logger.js';
import { loadConfig } from '../src/config.js';
import { readModelDigest } from './support/readModelDigest.js';
import { childrenCpuMs, cpuMsOf, json, machine, startService } from './support/service.js';
import { type CpuSplit, cpuSplit, keepEnded, printCpuSplit, type ProcessCpu, processCpu } from './support/threadCpu.js';

type Line = Record<string, unknown> & { uuid: string; start_date: string; type: string; value: number; source_name: string };

const SOURCES = [
  { type: 'HKQuantityTypeIdentifierHeartRate', unit: 'count/min', source_name: 'Apple Watch', source_bundle_id: 'com.apple.health.1A2B3C', device_model: 'Watch', product_type: 'Watch7,1' },
  { type: 'HKQuantityTypeIdentifierHeartRate', unit: 'count/min', source_name: 'Polar Flow', source_bundle_id: 'fi.polar.polarflow', device_model: 'H10', product_type: 'Polar H10' },
  { type: 'HKQuantityTypeIdentifierStepCount', unit: 'count', source_name: 'iPhone', source_bundle_id: 'com.apple.health.9F8E7D', device_model: 'iPhone', product_type: 'iPhone15,2' },
] as const;

/** `n` lines, one a minute from 2025-11-01 (plus `offsetDays`), of the three SOURCES in turn. */
export function makeLines(n: number, offsetDays = 0): Line[] {
  const base = Date.parse('2025-11-01T00:00:00.000Z') + offsetDays * 86_400_000;
  const lines: Line[] = [];
  for (let i = 0; i < n; i++) {
    const s = SOURCES[i % 3]!;
    const t = new Date(base + Math.floor(i / 3) * 60_000).toISOString();
    lines.push({
      kind: 'quantity',
      uuid: randomUUID().toUpperCase(),
      ...s,
      value: s.unit === 'count' ? i % 40 : 55 + (i % 60),
      start_date: t,
      end_date: t,
      was_user_entered: false,
      metadata: { HKTimeZone: 'Europe/Berlin' },
    });
  }
  return lines;
}

/**
 * Issue 27's reference limit, fixed whatever the read model's shape: the same rows into a table of
 * a key, a JSON column and one (user, type, start) index, one transaction per 20,000 rows.
 */
function rawSingleIndex(dir: string, lines: Line[], user: string): number {
  const db = new Database(join(dir, 'raw1.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (_id TEXT PRIMARY KEY, user_id TEXT, type TEXT, start_date TEXT, doc TEXT)');
  db.exec('CREATE INDEX t_user_type_start ON t (user_id, type, start_date)');
  const ins = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?)');
  const t0 = performance.now();
  const tx = db.transaction((from: number) => {
    for (let i = from; i < Math.min(from + 20_000, lines.length); i++) {
      const l = lines[i]!;
      ins.run(recordKey(user, 'device-a', l.uuid), user, l.type, l.start_date, JSON.stringify(l));
    }
  });
  for (let i = 0; i < lines.length; i += 20_000) tx(i);
  const ms = performance.now() - t0;
  db.close();
  return ms;
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : 0;
};

function filesUnder(dir: string): { path: string; bytes: number }[] {
  const out: { path: string; bytes: number }[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath ?? (e as unknown as { path: string }).path, e.name);
    out.push({ path: path.slice(dir.length + 1), bytes: statSync(path).size });
  }
  return out;
}

export default async function main(args: string[]) {
  const arg = (name: string, dflt: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
  const n = arg('lines', 1_000_000);
  const parts = arg('parts', 10);
  const keep = args.includes('--keep');
  const kept = args.find((a) => a.startsWith('--rebuild-of='))?.slice('--rebuild-of='.length);
  if (kept) {
    // The rebuild alone, on a DATA_DIR an earlier run kept (--keep): rebuilt in place.
    console.log(`machine: ${machine()}`);
    printRebuild(await rebuildAndCompare(kept, false, args.includes('--pipeline')));
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-ingest-'));
  try {
    console.log(`machine: ${machine()}`);
    const lines = makeLines(n);
    const per = Math.ceil(n / parts);
    const bodies: Buffer[] = [];
    let ndjsonBytes = 0;
    for (let p = 0; p < parts; p++) {
      const text = lines
        .slice(p * per, (p + 1) * per)
        .map((l) => JSON.stringify(l))
        .join('\n');
      ndjsonBytes += text.length;
      bodies.push(gzipSync(text, { level: 6 }));
    }
    const gzBytes = bodies.reduce((s, b) => s + b.length, 0);
    console.log(`upload: ${n} lines in ${parts} parts, ${(ndjsonBytes / 2 ** 20).toFixed(0)} MiB NDJSON, ${(gzBytes / 2 ** 20).toFixed(1)} MiB gzip`);

    const svcDir = join(dir, 'svc');
    const svc = await startService(svcDir);
    let cpuUsPerRecord: number | null = null;
    let threads: CpuSplit | null = null;
    const stages: Record<string, number> = {};
    const latencies: number[] = [];
    let runtime: { event_loop_delay_ms: { p50: number; p99: number; max: number }; max_rss_bytes: number };
    let userId: string;
    try {
      const admin = { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json' };
      const tenant = await json<{ api_key: string }>(await fetch(`${svc.base}/v1/admin/tenants`, { method: 'POST', headers: admin, body: '{"name":"bench"}' }));
      const tk = { authorization: `Bearer ${tenant.api_key}`, 'content-type': 'application/json' };
      const user = await json<{ id: string }>(await fetch(`${svc.base}/v1/users`, { method: 'POST', headers: tk, body: '{}' }));
      userId = user.id;
      const token = await json<{ token: string }>(await fetch(`${svc.base}/v1/users/${user.id}/tokens`, { method: 'POST', headers: tk, body: '{"scopes":["upload"]}' }));
      await json(await fetch(`${svc.base}/v1/admin/runtime/reset`, { method: 'POST', headers: { authorization: admin.authorization } }));

      // A tenant's server reading a user every 100 ms while the ingest runs.
      let probing = true;
      const prober = (async () => {
        while (probing) {
          const t = performance.now();
          await json(await fetch(`${svc.base}/v1/users/${user.id}`, { headers: { authorization: tk.authorization } }));
          latencies.push(performance.now() - t);
          await new Promise((r) => setTimeout(r, 100));
        }
      })();

      const cpu0 = cpuMsOf(svc.child.pid);
      const split0 = processCpu(svc.child.pid);
      let seen = split0;
      const t0 = performance.now();
      for (const [p, body] of bodies.entries()) {
        const form = new FormData();
        form.append('file', new Blob([body], { type: 'application/gzip' }), `export-${p}.ndjson.gz`);
        const res = await fetch(`${svc.base}/v1/ingest/device-a`, { method: 'POST', headers: { authorization: `Bearer ${token.token}`, 'upload-id': `bench-${p}-${randomUUID()}` }, body: form });
        if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
      }
      stages.accepted = performance.now() - t0;

      // Queryable: the ETL has no job left and the last sample of each series reads back.
      const lastOf = (pred: (l: Line) => boolean) => lines.findLast(pred)!;
      const probes = [
        { type: 'heart_rate', line: lastOf((l) => l.source_name === 'Apple Watch') },
        { type: 'heart_rate', line: lastOf((l) => l.source_name === 'Polar Flow') },
        { type: 'step_count', line: lastOf((l) => l.source_name === 'iPhone') },
      ];
      const jobs = async (status: string) => (await json<{ data: unknown[] }>(await fetch(`${svc.base}/v1/pipeline/etl-jobs?status=${status}`, { headers: tk }))).data.length;
      const coverageCount = async () =>
        (await json<{ days: { records: number }[] }>(await fetch(`${svc.base}/v1/users/${user.id}/coverage?view=all&start=2025-01-01&end=2027-01-01`, { headers: tk }))).days.reduce((s, d) => s + d.records, 0);
      for (;;) {
        await new Promise((r) => setTimeout(r, 100));
        seen = keepEnded(seen, processCpu(svc.child.pid));
        if (!stages.etl) {
          if (await jobs('parked')) throw new Error('an ETL job was parked');
          if ((await jobs('running')) === 0 && (await jobs('pending')) === 0) stages.etl = performance.now() - t0;
        }
        let found = 0;
        for (const pr of probes) {
          const q = new URLSearchParams({ type: pr.type, view: 'all', start: pr.line.start_date, end: new Date(Date.parse(pr.line.start_date) + 1000).toISOString(), limit: '10' });
          const page = await json<{ data: { source_name: string }[] }>(await fetch(`${svc.base}/v1/users/${user.id}/samples?${q}`, { headers: tk }));
          if (page.data.some((s) => s.source_name === pr.line.source_name)) found++;
        }
        // The last line of each series read back is not enough: small parts go to the ETL's lane
        // for small jobs and may be applied in any order, so every record is counted too.
        if (stages.etl && found === probes.length && (await coverageCount()) === n) break;
        if (performance.now() - t0 > 30 * 60_000) throw new Error(`not queryable after 30 minutes (coverage counts ${await coverageCount()} of ${n} records)`);
      }
      stages.queryable = performance.now() - t0;
      const cpu1 = cpuMsOf(svc.child.pid);
      if (cpu0 !== null && cpu1 !== null) cpuUsPerRecord = ((cpu1 - cpu0) * 1000) / n;
      seen = keepEnded(seen, processCpu(svc.child.pid));
      if (split0 && seen) threads = cpuSplit(split0, seen);
      probing = false;
      await prober;
      runtime = await json(await fetch(`${svc.base}/v1/admin/runtime`, { headers: { authorization: admin.authorization } }));
    } finally {
      await svc.stop();
    }

    const files = filesUnder(svcDir);
    const group = (f: string) => (f.startsWith('raw') ? 'raw payloads (gzip, as uploaded)' : f.startsWith('events') ? 'events (events.sqlite*)' : f.startsWith('readmodels') ? 'read models (readmodels.sqlite*)' : 'other');
    const byGroup = new Map<string, number>();
    for (const f of files) byGroup.set(group(f.path), (byGroup.get(group(f.path)) ?? 0) + f.bytes);
    const total = files.reduce((s, f) => s + f.bytes, 0);

    const rebuild = await rebuildAndCompare(svcDir, keep, args.includes('--pipeline'));
    const raw1Ms = rawSingleIndex(dir, lines, userId!);
    const s = (ms: number) => (ms / 1000).toFixed(1);
    const rate = (ms: number) => Math.round(n / (ms / 1000));
    console.log('\n| stage | seconds from the first request | records/s |');
    console.log('|---|---:|---:|');
    console.log(`| ${parts} uploads accepted (transfer, checks, durable raw store, event) | ${s(stages.accepted!)} | |`);
    console.log(`| ETL finished (parse, normalise, append record events), on worker threads | ${s(stages.etl!)} | ${rate(stages.etl!)} |`);
    console.log(`| **all ${n} records queryable** | **${s(stages.queryable!)}** | **${rate(stages.queryable!)}** |`);
    console.log(`| raw better-sqlite3 inserts of the same rows, JSON column and one (user, type, start) index (issue 27's limit) | ${s(raw1Ms)} | ${rate(raw1Ms)} |`);
    console.log(`\nend to end / raw inserts: **${((raw1Ms / stages.queryable!) * 100).toFixed(0)} %** of the single-index table's rate (the samples are blocks since issue 38: no read-model shape of one row per sample to compare with)`);
    if (cpuUsPerRecord !== null) console.log(`\nservice CPU time, all threads, from the first upload to all queryable: ${cpuUsPerRecord.toFixed(1)} µs per record`);
    if (threads) printCpuSplit('thread, first upload to all queryable (ended threads up to their last reading, sampled every 100 ms)', threads, n / 1e6, 'M records');
    console.log(`\nduring the ingest: event-loop delay p50 ${runtime!.event_loop_delay_ms.p50} ms, p99 ${runtime!.event_loop_delay_ms.p99} ms, max ${runtime!.event_loop_delay_ms.max} ms`);
    console.log(`GET /v1/users/{id} every 100 ms: ${latencies.length} requests, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
    console.log(`peak resident memory of the service: ${(runtime!.max_rss_bytes / 2 ** 20).toFixed(0)} MiB`);
    console.log(`\nDATA_DIR: ${(total / 2 ** 20).toFixed(0)} MiB = **${Math.round(total / n)} bytes per sample**`);
    for (const [g, b] of [...byGroup].sort((a, b) => b[1] - a[1])) console.log(`- ${g}: ${Math.round(b / n)} B/sample (${(b / 2 ** 20).toFixed(0)} MiB)`);
    printRebuild(rebuild);
    if (keep) console.log(`\nkept: ${svcDir}`);
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

type Digest = Awaited<ReturnType<typeof readModelDigest>>;
type RebuildRun = { seconds: number; cpuSeconds: number | null; threads: CpuSplit | null; live: Digest; rebuilt: Digest };

/** The read models as the live projectors left them, then rebuilt from the events by the CLI, digested before and after. */
async function rebuildAndCompare(svcDir: string, keepLive = false, pipeline = false): Promise<RebuildRun> {
  const digestOf = async () => {
    const ctx = await createContext(loadConfig({ DATA_DIR: svcDir, LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv), { log: createLogger('warn'), runBackground: 'none' });
    try {
      return await readModelDigest(ctx.readStore);
    } finally {
      await ctx.close();
    }
  };
  const live = await digestOf();
  // Kept runs keep the live read models too (the rebuild replaces them), to compare with the rebuilt ones.
  if (keepLive) for (const f of readdirSync(svcDir)) if (f.startsWith('readmodels.sqlite')) copyFileSync(join(svcDir, f), join(svcDir, f.replace('readmodels', 'readmodels-live')));
  const c0 = childrenCpuMs();
  const t1 = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'projections', 'rebuild', ...(pipeline ? ['--pipeline'] : [])], {
    env: { ...process.env, DATA_DIR: svcDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  // Its threads' CPU, read every 100 ms (the replay's store thread, the main thread; issue 38, h18).
  let seen: ProcessCpu | null = null;
  const poll = setInterval(() => (seen = keepEnded(seen, processCpu(child.pid))), 100);
  const status = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  clearInterval(poll);
  const seconds = (performance.now() - t1) / 1000;
  const c1 = childrenCpuMs();
  if (status !== 0) throw new Error(`rebuild exited ${status}`);
  const threads = seen === null ? null : cpuSplit({ ...(seen as ProcessCpu), totalMs: 0, threads: new Map() }, seen, 4);
  return { seconds, cpuSeconds: c0 !== null && c1 !== null ? (c1 - c0) / 1000 : null, threads, live, rebuilt: await digestOf() };
}

/** Equal, document by document, or the run fails. */
function printRebuild({ seconds, cpuSeconds, threads, live, rebuilt }: RebuildRun): void {
  console.log(`\nrebuild of every read model (npm run cli -- projections rebuild): ${seconds.toFixed(1)} s${cpuSeconds !== null ? `, ${cpuSeconds.toFixed(1)} s of CPU` : ''}`);
  if (threads) printCpuSplit('thread of the rebuild (its last reading, every 100 ms)', threads, 1000, 's');
  console.log(`live state:    ${live.hash} (${live.docs} documents)`);
  console.log(`rebuilt state: ${rebuilt.hash} (${rebuilt.docs} documents): ${live.hash === rebuilt.hash ? 'IDENTICAL' : 'DIFFERENT'}`);
  if (live.hash !== rebuilt.hash) {
    const differ = Object.keys(live.collections).filter((c) => live.collections[c] !== rebuilt.collections[c]);
    console.log(`collections that differ: ${differ.join(', ') || '(none: the checkpoints do)'}`);
    process.exitCode = 1;
  }
}
