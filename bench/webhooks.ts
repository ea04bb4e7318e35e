/**
 * `npm run bench -- webhooks [--events=10000] [--endpoints=5] [--rate=300] [--dir=PATH]`
 *
 * The webhook engine end to end on the embedded store: `--events` domain events (user
 * registrations) appended to the log, each delivered to `--endpoints` endpoints of the tenant on
 * a local receiver (a child process answering 204). Four runs in one process:
 *  0. a warm-up burst of a fifth of the events, not reported;
 *  1. burst: every event appended at once; deliveries/s from the first append to the last
 *     delivery received;
 *  2. paced: the events appended at `--rate` per second; event-to-delivery latency (the event's
 *     time in the log to its arrival at the receiver) p50/p99;
 *  3. burst again with one more endpoint, healthy, then with one more that never answers (a dead
 *     endpoint): the engine writes as many deliveries in both, and the second measures what the
 *     dead endpoint costs the others;
 *  4. raw: the same bodies POSTed from this process with undici, as many in flight as the engine
 *     allows for those endpoints, no store, no signing: the floor of the HTTP work itself.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createWebhook } from '../commands/webhooks/createWebhook.js';
import type { UserRegistered } from '../commands/users/user.js';
import { createContext } from '../src/app/context.js';
import type { AppContext } from '../src/server/appContext.js';
import { loadConfig } from '../src/config.js';
import { rawPosts, ReceiverProcess } from './support/webhookReceiver.js';

type Options = { events: number; endpoints: number; rate: number; dir: string | null };

function parseOptions(args: string[]): Options {
  const o: Options = { events: 10_000, endpoints: 5, rate: 300, dir: null };
  for (const a of args) {
    const m = /^--(events|endpoints|rate|dir)=(.+)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a} (expected --events= --endpoints= --rate= --dir=)`);
    if (m[1] === 'dir') o.dir = m[2]!;
    else o[m[1] as 'events' | 'endpoints' | 'rate'] = Number(m[2]);
  }
  return o;
}

// ---- the runs ---------------------------------------------------------------------------------

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** `cpuUs`: this process's CPU (all its threads: the engine, the store, the projections) per delivery, µs. */
type RunResult = { label: string; deliveries: number; seconds: number; perSecond: number; p50: number; p99: number; cpuUs: number };

const cpuUsSince = (from: NodeJS.CpuUsage, deliveries: number) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / Math.max(1, deliveries);
};

async function addEndpoints(ctx: AppContext, tenantId: string, urls: string[]): Promise<void> {
  for (const url of urls) {
    await createWebhook(ctx.eventStore, ctx.webhookSecrets, { tenantId, endpointId: randomUUID(), url, eventTypes: ['user.created'], at: new Date().toISOString(), by: 'bench' }, { allowPrivateTargets: true });
  }
}

/**
 * Appends the events in batches (one commit each, on one stream: the dispatcher reads the log,
 * whatever the streams): all at once in batches of 500, or paced, a batch every 10 ms holding
 * the events due by then. Each commit of the embedded store waits for the disk, so one append
 * per event would measure the disk, not the engine.
 */
async function appendUsers(ctx: AppContext, tenantId: string, count: number, perSecond: number | null): Promise<void> {
  const stream = `bench-${tenantId}`;
  const started = Date.now();
  let appended = 0;
  while (appended < count) {
    let upTo = Math.min(count, appended + 500);
    if (perSecond !== null) {
      await new Promise((r) => setTimeout(r, 10));
      upTo = Math.min(count, Math.floor(((Date.now() - started) / 1000) * perSecond));
      if (upTo <= appended) continue;
    }
    const events: UserRegistered[] = [];
    for (let i = appended; i < upTo; i++) {
      const userId = randomUUID();
      events.push({ type: 'user.registered', data: { user_id: userId, tenant_id: tenantId, external_ref: `bench-${i}`, created_at: new Date().toISOString() } });
    }
    await ctx.eventStore.appendToStream(stream, events);
    appended = upTo;
  }
}

/** `extraUrls` are further endpoints; `extraAnswer`: whether they answer (their deliveries count) or not. */
async function engineRun(ctx: AppContext, receiver: ReceiverProcess, label: string, o: Options, extraUrls: string[], perSecond: number | null, extraAnswer = false): Promise<RunResult> {
  const tenantId = randomUUID();
  const urls = Array.from({ length: o.endpoints }, (_, i) => receiver.hook(i));
  await addEndpoints(ctx, tenantId, [...urls, ...extraUrls]);
  receiver.reset();
  const expected = o.events * (o.endpoints + (extraAnswer ? extraUrls.length : 0));
  const reached = receiver.reached(expected);
  const cpu = process.cpuUsage();
  const started = Date.now();
  await appendUsers(ctx, tenantId, o.events, perSecond);
  const { at } = await reached;
  const cpuUs = cpuUsSince(cpu, expected);
  const report = await receiver.report();
  const sorted = report.latencies.sort((a, b) => a - b);
  const seconds = (at - started) / 1000;
  return { label, deliveries: report.count, seconds, perSecond: report.count / seconds, p50: pct(sorted, 50), p99: pct(sorted, 99), cpuUs };
}

async function rawRun(receiver: ReceiverProcess, o: Options): Promise<RunResult> {
  const bodies = Array.from({ length: o.events }, (_, i) => JSON.stringify({ id: randomUUID(), type: 'user.created', timestamp: '', test: false, data: { user_id: randomUUID(), external_ref: `bench-${i}` } }));
  const cpu = process.cpuUsage();
  const r = await rawPosts(receiver, bodies, o.endpoints);
  const cpuUs = cpuUsSince(cpu, r.deliveries);
  const times = r.latencies.sort((a, b) => a - b);
  return { label: `raw undici POSTs of the same bodies, ${r.inFlight} in flight`, deliveries: r.deliveries, seconds: r.seconds, perSecond: r.perSecond, p50: pct(times, 50), p99: pct(times, 99), cpuUs };
}

export default async function main(args: string[]): Promise<void> {
  const o = parseOptions(args);
  const dir = o.dir ?? mkdtempSync(join(os.tmpdir(), 'wellstream-bench-webhooks-'));
  const receiver = await ReceiverProcess.start();
  const config = loadConfig({ ...process.env, DATA_DIR: dir, LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } as NodeJS.ProcessEnv);
  const ctx = await createContext(config);
  const results: RunResult[] = [];
  try {
    // Warm-up (not reported): compiled code paths, open connections, a used page cache.
    await engineRun(ctx, receiver, 'warm-up', { ...o, events: Math.ceil(o.events / 5) }, [], null);
    results.push(await engineRun(ctx, receiver, `burst: ${o.events} events appended at once`, o, [], null));
    results.push(await engineRun(ctx, receiver, `paced: ${o.events} events at ${o.rate}/s`, o, [], o.rate));
    results.push(await engineRun(ctx, receiver, `burst to ${o.endpoints + 1} healthy endpoints (the same work as the next run)`, o, [receiver.hook(o.endpoints)], null, true));
    results.push(await engineRun(ctx, receiver, `burst with a dead endpoint (never answers) beside the ${o.endpoints}`, o, [`http://127.0.0.1:${receiver.port}/dead`], null));
    results.push(await rawRun(receiver, o));
  } finally {
    receiver.stop();
    // The dead endpoint's attempts are still open: no need to wait for their 15 s.
    await Promise.race([ctx.close(), new Promise((r) => setTimeout(r, 2000))]);
    if (!o.dir) rmSync(dir, { recursive: true, force: true });
  }
  console.log(`machine: ${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString()}`);
  console.log(`${o.events} events × ${o.endpoints} endpoints = ${o.events * o.endpoints} deliveries per run; receiver in a child process answering 204\n`);
  console.log('| run | deliveries | seconds | deliveries/s | latency p50 ms | latency p99 ms | CPU µs per delivery |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of results) console.log(`| ${r.label} | ${r.deliveries} | ${r.seconds.toFixed(2)} | ${Math.round(r.perSecond)} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} | ${Math.round(r.cpuUs)} |`);
  console.log('\nEngine runs: latency from the event\'s time in the log to its arrival at the receiver. Raw run: per request, send to answer.');
  console.log('CPU: this process, all its threads (the engine, the stores, the projections; not the receiver), from the first append to the last delivery, per delivery.');
  process.exit(0);
}

