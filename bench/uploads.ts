/**
 * `npm run bench -- uploads [--users=200 --uploads=2000 --inflight=6 --endpoints=0 --idle=0]`:
 * one-line device-a uploads from many users of one tenant, `inflight` at a time, to the service
 * started as `npm start` starts it: the phone-sync case (thousands of small batches rather than
 * one big file). Reports uploads accepted per second, the POST's p50/p99, the time until every
 * upload's ETL job finished (succeeded: its records stored and `data.written` appended), and the
 * service's CPU per upload, in all and per thread (/proc/<pid>/task, threads of one name summed).
 * Profile the service with `BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/p"` to see where an
 * upload's milliseconds go.
 *
 * Issue 37's table, every row of it in one run:
 *
 *   UPLOADS_IN_FLIGHT_PER_TENANT=8 npm run bench -- uploads --users=2000 --uploads=2000 --endpoints=5 --idle=200
 *
 * - `--endpoints=N` registers N webhook endpoints for `data.written` (on a receiver in a child
 *   process answering 204, bench/support/webhookReceiver.ts) before the burst, and reports: every
 *   delivery received and every upload readable (its GET `done`), seconds from the first upload;
 *   deliveries per second; per upload and endpoint, its 202 → its `data.written` arriving, p50/p99.
 *   The CPU is then counted until the last delivery.
 * - `--idle=N`: after the burst, N uploads one at a time, each followed by polling its GET every
 *   2 ms until `done`: 202 → readable p50/p99.
 * - `--history=N`: before the burst (outside the timed part, before the endpoints exist), each user
 *   uploads N heart rates of 2026-11-01 between 00:00 and 20:00 UTC, once, and the bench waits until
 *   they are readable; the burst's uploads then start at 20:00 (upload i at i seconds after) and the
 *   idle ones at 22:00, so each joins a day already holding N samples of its user, as a phone's
 *   line joins its day (docs/sample-blocks.md: a day's size is what a block write reads). Without
 *   it (0), upload i is minute i of November, as before.
 * - `--warmup=N`: after the endpoints exist and before the measured burst, N one-line uploads from N
 *   users of their own (created for it), `inflight` at a time, waited for until every one is
 *   processed and delivered. The burst then runs in a service whose code V8 has already compiled
 *   (its threads' JIT warm-up, the shared ETL thread's start): what an upload costs a service that
 *   has been running, beside the default's cold figure (BENCHMARKS.md, issue 37, H18-C).
 * - A 429 (the tenant's upload slots, 4 by default: contracts §18; or the ETL queue's back-pressure)
 *   is retried after its Retry-After and counted. The environment reaches the service, so
 *   `UPLOADS_IN_FLIGHT_PER_TENANT=8` lets 6 in flight through without them.
 * Each of the issue's figures is printed beside the bare limit of the same work measured in the
 * same run (durable writes through bare better-sqlite3 and the file system; the same webhook
 * bodies POSTed with undici) and their ratio.
 */
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { json, machine, startService, type RunningService } from './support/service.js';
import { heartRateAt, heartRateLine, inFlight, percentile, uploadOneLiners, waitForEtlJobs, type Accepted } from './support/deviceUploads.js';
import { cpuSplit, printCpuSplit, printIoSplit, processCpu } from './support/threadCpu.js';
import { rawPosts, ReceiverProcess, type Arrival, type RawPostsResult } from './support/webhookReceiver.js';

type AuthHeaders = Record<string, string>;
type BenchUser = { id: string; token: string };

/** How many set-up requests (users, tokens) are sent at once: the set-up is not what is measured. */
const SETUP_IN_FLIGHT = 8;
/** How often the idle run asks whether its upload is readable. */
const IDLE_POLL_MS = 2;
const TIMEOUT_MS = 30 * 60_000;
/** `--history`: the day every user's samples go to, the span its history fills, where the burst and the idle uploads start. */
const HISTORY_DAY = Date.parse('2026-11-01T00:00:00.000Z');
const HISTORY_SPAN_MS = 20 * 3_600_000;
const BURST_AT = HISTORY_DAY + HISTORY_SPAN_MS;
const IDLE_AT = HISTORY_DAY + 22 * 3_600_000;

export default async function main(args: string[]) {
  const arg = (name: string, dflt: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
  const users = arg('users', 200);
  const uploads = arg('uploads', 2000);
  const inflight = arg('inflight', 6);
  const endpoints = arg('endpoints', 0);
  const idle = arg('idle', 0);
  const history = arg('history', 0);
  const warmup = arg('warmup', 0);
  const burstLine = history > 0 ? (i: number) => heartRateAt(BURST_AT + i * 1000, i) : heartRateLine;
  const idleLine = history > 0 ? (k: number) => heartRateAt(IDLE_AT + k * 1000, k) : heartRateLine;
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-uploads-'));
  const receiver = endpoints > 0 ? await ReceiverProcess.start() : null;
  const svc = await startService(dir, receiver ? { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } : {});
  try {
    console.log(`machine: ${machine()}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const admin = { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json' };
    const tenant = await json<{ api_key: string }>(await fetch(`${svc.base}/v1/admin/tenants`, { method: 'POST', headers: admin, body: '{"name":"bench"}' }));
    const tk = { authorization: `Bearer ${tenant.api_key}`, 'content-type': 'application/json' };
    const setup0 = performance.now();
    const benchUsers = await createUsers(svc, tk, users);
    console.log(`${users} users and their upload tokens created in ${((performance.now() - setup0) / 1000).toFixed(1)} s (${SETUP_IN_FLIGHT} requests in flight)`);
    if (history > 0) await uploadHistory(svc, tk, benchUsers, history);
    for (let e = 0; e < endpoints; e++) {
      await json(await fetch(`${svc.base}/v1/webhooks`, { method: 'POST', headers: tk, body: JSON.stringify({ url: receiver!.hook(e), event_types: ['data.written'] }) }));
    }
    if (warmup > 0) await warmUp(svc, tk, receiver, warmup, endpoints, inflight);
    console.log(`upload slots per tenant: UPLOADS_IN_FLIGHT_PER_TENANT=${process.env.UPLOADS_IN_FLIGHT_PER_TENANT ?? '(unset: the default, 4)'}; 429s are retried after Retry-After and counted`);
    receiver?.reset();

    const cpu0 = processCpu(svc.child.pid);
    const t0 = performance.now();
    const firstAt = Date.now();
    const allDelivered = receiver ? withTimeout(receiver.reached(uploads * endpoints), 'deliveries') : null;
    const burst = await uploadOneLiners(`${svc.base}/v1/ingest/device-a`, (i) => benchUsers[i % users]!.token, uploads, inflight, 'u', { retry429: true, line: burstLine });
    const acceptedMs = performance.now() - t0;
    await waitForEtlJobs(svc.base, tk, t0);
    const doneMs = performance.now() - t0;
    const lastDeliveryAt = allDelivered ? (await allDelivered).at : null;
    const cpu1 = processCpu(svc.child.pid);
    const acceptedPerSecond = uploads / (acceptedMs / 1000);
    console.log(`\n| ${uploads} one-line uploads, ${users} users, ${inflight} in flight | figure |`);
    console.log('|---|---:|');
    console.log(`| accepted (202) per second | ${Math.round(acceptedPerSecond)} |`);
    console.log(`| POST /v1/ingest p50 / p99 ms | ${percentile(burst.latencies, 50).toFixed(1)} / ${percentile(burst.latencies, 99).toFixed(1)} |`);
    console.log(`| all ETL jobs finished after (s) | ${(doneMs / 1000).toFixed(1)} |`);
    console.log(`| processed per second (accepted → ETL done) | ${Math.round(uploads / (doneMs / 1000))} |`);
    const cpuUntil = receiver ? `until the last of ${uploads * endpoints} deliveries` : 'until every ETL job finished';
    const cpu = cpu0 && cpu1 ? cpuSplit(cpu0, cpu1) : null;
    if (cpu) console.log(`| service CPU time per upload, all threads (ms) | ${(cpu.totalMs / uploads).toFixed(1)} |`);
    const raw = rawDurableUploads(join(dir, 'raw-limit'), uploads);
    console.log(`| raw limit: one at a time, payload file fsynced + renamed + directory fsynced, then one fsynced SQLite row (per second) | ${Math.round(uploads / (raw.ms / 1000))} |`);
    console.log(`\n429s answered and retried during the burst: ${burst.tooMany}`);
    if (cpu0 && cpu1) printIoSplit(`service bytes written by thread, ${cpuUntil}`, cpu0, cpu1, uploads, 'upload');
    if (cpu) {
      printCpuSplit(`service CPU by thread, from the first upload (${(cpu0!.ageMs / 1000).toFixed(1)} s after the service started) ${cpuUntil}`, cpu, uploads, 'upload');
      // Node 20 names no thread; which worker is which follows from when they start (src/processes/etl/etlPool.ts).
      console.log('Worker threads: the projector starts with the service; the shared ETL threads (ETL_CONCURRENCY, 1 by default) at their first small job.');
    }

    const rows: Row[] = [];
    const rawPerSecond = uploads / (raw.ms / 1000);
    rows.push({ measure: `${uploads} one-line uploads from ${users} users, ${inflight} in flight: accepted per second`, figure: fmt(acceptedPerSecond), bare: `${fmt(rawPerSecond)} (durable writes, one at a time)`, ratio: pct(acceptedPerSecond / rawPerSecond) });
    if (receiver && lastDeliveryAt !== null) {
      const report = await receiver.report();
      const readable = await waitReadable(svc.base, tk, burst.accepted, (i) => benchUsers[i % users]!.id, inflight);
      const rawHttp = await rawPosts(receiver, Array.from({ length: uploads }, (_, i) => dataWrittenBody(benchUsers[i % users]!.id, i)), endpoints);
      const delays = deliveryDelays(report.arrivals, burst.accepted, (i) => benchUsers[i % users]!.id);
      const deliveredS = (lastDeliveryAt - firstAt) / 1000;
      // The service sends `data.written` only once the upload's records read back (docs/webhooks.md); the
      // sweep after the last delivery checks that every upload's GET says so too.
      const wholeS = readable.allDoneFirstSweep ? deliveredS : Math.max(deliveredS, (readable.doneAt - firstAt) / 1000);
      const bareS = raw.ms / 1000 + rawHttp.seconds;
      console.log(`\ndeliveries received: ${report.count} (${report.duplicates} duplicates, counted once); first at ${((report.first - firstAt) / 1000).toFixed(2)} s, last at ${deliveredS.toFixed(2)} s from the first upload`);
      console.log(`every upload's GET: ${readable.allDoneFirstSweep ? '`done` at the first sweep after the last delivery' : `\`done\` only after ${readable.sweeps} sweeps, at ${((readable.doneAt - firstAt) / 1000).toFixed(2)} s`}`);
      rows.push({ measure: `the same: all readable and their \`data.written\` delivered to ${endpoints} endpoints, s from the first upload`, figure: wholeS.toFixed(2), bare: `${bareS.toFixed(2)} (${(raw.ms / 1000).toFixed(2)} s durable writes + ${rawHttp.seconds.toFixed(2)} s bare POSTs)`, ratio: times(wholeS / bareS) });
      const rawDelivery = percentile(raw.latencies, 99) + percentile(rawHttp.latencies, 99);
      rows.push({ measure: `upload accepted → \`data.written\` delivered, p50 / p99 ms, during that burst (${delays.length} matched)`, figure: `${fmt(percentile(delays, 50))} / ${fmt(percentile(delays, 99))} at ${fmt(acceptedPerSecond)}/s`, bare: `${rawDelivery.toFixed(1)} (p99 durable write + p99 bare POST)`, ratio: times(percentile(delays, 99) / rawDelivery) });
      const perSecond = report.count / deliveredS;
      rows.push({ measure: 'webhook deliveries end to end per second (first upload → last delivery)', figure: fmt(perSecond), bare: `${fmt(rawHttp.perSecond)} (bare POSTs, ${rawHttp.inFlight} in flight)`, ratio: pct(perSecond / rawHttp.perSecond) });
      if (cpu) rows.push(cpuRow(cpu.totalMs / uploads, raw, rawHttp, uploads, endpoints));
    } else if (cpu) {
      rows.push(cpuRow(cpu.totalMs / uploads, raw, null, uploads, 0));
    }
    if (idle > 0) {
      const idleMs = await idleUploads(svc.base, tk, benchUsers, idle, idleLine);
      const rawP99 = percentile(raw.latencies, 99);
      rows.push({ measure: `idle upload → readable, p50 / p99 ms (${idle} one at a time, polled every ${IDLE_POLL_MS} ms)`, figure: `${percentile(idleMs, 50).toFixed(1)} / ${percentile(idleMs, 99).toFixed(1)}`, bare: `${rawP99.toFixed(1)} (p99 durable write)`, ratio: times(percentile(idleMs, 99) / rawP99) });
    }
    if (endpoints > 0 || idle > 0) {
      console.log('\n| issue 37 measure | this run | bare limit of the same work, same run | service against bare |');
      console.log('|---|---:|---:|---:|');
      for (const r of rows) console.log(`| ${r.measure} | ${r.figure} | ${r.bare} | ${r.ratio} |`);
      console.log('\nRates: the service\'s as a share of the bare rate; times and CPU: how many times the bare figure.');
    }
  } finally {
    receiver?.stop();
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

type Row = { measure: string; figure: string; bare: string; ratio: string };
const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en') : x.toFixed(1));
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const times = (x: number) => `${x.toFixed(1)} ×`;

/**
 * CPU per upload against the bare work's: a durable write of the upload and, per endpoint, one
 * POST of its delivery, both as this process spent them (the receiver's side is not counted,
 * like the service's deliveries' receiving is not; nor is receiving the upload's own POST).
 */
function cpuRow(serviceMs: number, raw: RawDurable, http: RawPostsResult | null, uploads: number, endpoints: number): Row {
  const bareMs = raw.cpuMs / uploads + (http ? http.cpuMs / uploads : 0);
  const what = http ? `durable write + ${endpoints} bare POSTs` : 'durable write';
  return { measure: 'CPU per one-line upload, all threads (ms)', figure: serviceMs.toFixed(2), bare: `${bareMs.toFixed(2)} (${what}, this process)`, ratio: times(serviceMs / bareMs) };
}

async function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not complete after ${TIMEOUT_MS / 60_000} minutes`)), TIMEOUT_MS)));
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `--warmup`: `n` one-line uploads from `n` users of their own, processed and (with endpoints) delivered before the measured burst. */
async function warmUp(svc: RunningService, tk: AuthHeaders, receiver: ReceiverProcess | null, n: number, endpoints: number, inflight: number): Promise<void> {
  const t0 = performance.now();
  const warmUsers = await createUsers(svc, tk, n);
  receiver?.reset();
  const delivered = receiver ? withTimeout(receiver.reached(n * endpoints), 'warm-up deliveries') : null;
  await uploadOneLiners(`${svc.base}/v1/ingest/device-a`, (i) => warmUsers[i]!.token, n, inflight, 'w', { retry429: true, line: heartRateLine });
  await waitForEtlJobs(svc.base, tk, performance.now());
  await delivered;
  console.log(`warm-up: ${n} one-line uploads from ${n} users of their own, processed${receiver ? ' and delivered' : ''} in ${((performance.now() - t0) / 1000).toFixed(1)} s (users included), before the measured burst`);
}

async function createUsers(svc: RunningService, tk: AuthHeaders, n: number): Promise<BenchUser[]> {
  return inFlight(n, SETUP_IN_FLIGHT, async () => {
    const user = await json<{ id: string }>(await fetch(`${svc.base}/v1/users`, { method: 'POST', headers: tk, body: '{}' }));
    const { token } = await json<{ token: string }>(await fetch(`${svc.base}/v1/users/${user.id}/tokens`, { method: 'POST', headers: tk, body: '{"scopes":["upload"]}' }));
    return { id: user.id, token };
  });
}

/**
 * `--history`: one upload per user of `n` heart rates spread over HISTORY_SPAN_MS of HISTORY_DAY,
 * SETUP_IN_FLIGHT at a time, then waits until every one is readable (its GET `done`).
 */
async function uploadHistory(svc: RunningService, tk: AuthHeaders, benchUsers: BenchUser[], n: number): Promise<void> {
  const t0 = performance.now();
  const step = HISTORY_SPAN_MS / n;
  const body = () => gzipSync(Array.from({ length: n }, (_, j) => heartRateAt(HISTORY_DAY + Math.floor(j * step), j)).join('\n'));
  const accepted = await inFlight(benchUsers.length, SETUP_IN_FLIGHT, async (k): Promise<Accepted> => {
    for (;;) {
      const res = await fetch(`${svc.base}/v1/ingest/device-a`, { method: 'POST', headers: { authorization: `Bearer ${benchUsers[k]!.token}`, 'upload-id': `history-${k}`, 'content-type': 'application/gzip' }, body: body() });
      if (res.status === 429) {
        await res.arrayBuffer();
        await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
        continue;
      }
      if (res.status !== 202) throw new Error(`history upload answered ${res.status}: ${await res.text()}`);
      return { at: Date.now(), uploadId: ((await res.json()) as { upload_id: string }).upload_id };
    }
  });
  await waitReadable(svc.base, tk, accepted, (k) => benchUsers[k]!.id, SETUP_IN_FLIGHT);
  console.log(`history: ${n.toLocaleString('en')} heart rates of ${new Date(HISTORY_DAY).toISOString().slice(0, 10)} per user (${(n * benchUsers.length).toLocaleString('en')} in all) uploaded and readable in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

const uploadUrl = (base: string, userId: string, uploadId: string) => `${base}/v1/users/${userId}/uploads/device-a/${encodeURIComponent(uploadId)}`;

async function uploadStatus(base: string, tk: AuthHeaders, userId: string, uploadId: string): Promise<string> {
  return (await json<{ status: string }>(await fetch(uploadUrl(base, userId, uploadId), { headers: tk }))).status;
}

/**
 * Reads every upload's GET, `inflight` at a time, again for those not `done` (every 50 ms) until
 * all are: whether the first sweep found them all done, how many sweeps, and when (epoch ms).
 */
async function waitReadable(base: string, tk: AuthHeaders, accepted: Accepted[], userOf: (i: number) => string, inflight: number): Promise<{ allDoneFirstSweep: boolean; sweeps: number; doneAt: number }> {
  let pending = accepted.map((_, i) => i);
  const t0 = performance.now();
  for (let sweeps = 1; ; sweeps++) {
    const statuses = await inFlight(pending.length, inflight, (k) => uploadStatus(base, tk, userOf(pending[k]!), accepted[pending[k]!]!.uploadId));
    const failed = statuses.find((s) => s === 'failed' || s === 'parked');
    if (failed) throw new Error(`an upload ended ${failed}`);
    pending = pending.filter((_, k) => statuses[k] !== 'done');
    if (pending.length === 0) return { allDoneFirstSweep: sweeps === 1, sweeps, doneAt: Date.now() };
    if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`${pending.length} uploads not readable after 30 minutes`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Per upload and endpoint, its 202 → its `data.written` arriving (ms). `data.written` names the
 * user, not the upload, so a user's deliveries at an endpoint are matched to the user's 202s in
 * the order both came: exact with one upload per user (the issue's 2,000 users), an approximation
 * with more (a user's uploads may be processed out of order).
 */
function deliveryDelays(arrivals: Arrival[], accepted: Accepted[], userOf: (i: number) => string): number[] {
  const acceptedByUser = new Map<string, number[]>();
  accepted.forEach((a, i) => acceptedByUser.set(userOf(i), [...(acceptedByUser.get(userOf(i)) ?? []), a.at]));
  for (const ats of acceptedByUser.values()) ats.sort((a, b) => a - b);
  const arrivedBy = new Map<string, number[]>();
  for (const [path, type, userId, at] of arrivals) {
    if (type !== 'data.written' || userId === null) continue;
    const key = `${path} ${userId}`;
    arrivedBy.set(key, [...(arrivedBy.get(key) ?? []), at]);
  }
  const delays: number[] = [];
  for (const [key, ats] of arrivedBy) {
    const sent = acceptedByUser.get(key.slice(key.indexOf(' ') + 1)) ?? [];
    ats.sort((a, b) => a - b).forEach((at, k) => sent[k] !== undefined && delays.push(at - sent[k]!));
  }
  return delays;
}

/** A body shaped as the service's `data.written` for one one-line upload (the bare POSTs send it). */
const dataWrittenBody = (userId: string, i: number) =>
  JSON.stringify({ id: randomUUID(), type: 'data.written', timestamp: '', test: false, data: { user_id: userId, external_ref: null, provider: 'device-a', records: { quantity: 1 }, types: ['heart_rate'], first_day: '2026-11-01', last_day: '2026-11-01', n: i } });

/**
 * `n` uploads one at a time (user k of the list for upload k), each polled every IDLE_POLL_MS
 * until its GET says `done`: each upload's 202 → readable in ms. The polling is load on the
 * service too (a GET every 2 ms on the same two cores), so this is an upper bound.
 */
async function idleUploads(base: string, tk: AuthHeaders, benchUsers: BenchUser[], n: number, line: (k: number) => string): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < n; k++) {
    const user = benchUsers[k % benchUsers.length]!;
    const { accepted } = await uploadOneLiners(`${base}/v1/ingest/device-a`, () => user.token, 1, 1, `idle-${k}`, { retry429: true, line: () => line(k) });
    const t = performance.now();
    for (;;) {
      const status = await uploadStatus(base, tk, user.id, accepted[0]!.uploadId);
      if (status === 'done') break;
      if (status === 'failed' || status === 'parked') throw new Error(`idle upload ${k} ended ${status}`);
      if (performance.now() - t > TIMEOUT_MS) throw new Error(`idle upload ${k} not readable after 30 minutes`);
      await new Promise((r) => setTimeout(r, IDLE_POLL_MS));
    }
    out.push(performance.now() - t);
  }
  return out;
}

type RawDurable = { ms: number; latencies: number[]; cpuMs: number };

/**
 * The disk's floor for durable small uploads in the same run: for each upload, its payload
 * written to a file, fsynced, renamed into place and the directory fsynced, then one row inserted
 * in a WAL SQLite file with synchronous=FULL; one upload at a time, nothing shared. Answers the
 * wall time, each upload's time, and this process's CPU for them, in ms.
 */
function rawDurableUploads(dir: string, n: number): RawDurable {
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, 'raw.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE uploads (id TEXT PRIMARY KEY, data TEXT NOT NULL)');
  const insert = db.prepare<[string, string]>('INSERT INTO uploads (id, data) VALUES (?, ?)');
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
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
    latencies.push(performance.now() - t);
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  db.close();
  return { ms, latencies, cpuMs: (cpu.user + cpu.system) / 1000 };
}
