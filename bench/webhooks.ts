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
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { createWebhook } from '../commands/webhooks/createWebhook.js';
import type { UserRegistered } from '../commands/users/user.js';
import { createContext } from '../src/app/context.js';
import type { AppContext } from '../src/server/appContext.js';
import { loadConfig } from '../src/config.js';
import { DEFAULT_LIMITS } from '../src/processes/webhooks/deliveryLimits.js';

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

// ---- the receiver, in a child process of its own --------------------------------------------

type ToReceiver = { kind: 'expect'; count: number } | { kind: 'report' } | { kind: 'reset' };
type FromReceiver = { kind: 'listening'; port: number } | { kind: 'reached'; at: number } | { kind: 'report'; latencies: number[]; count: number; first: number; last: number };

function runReceiver(): void {
  let latencies: number[] = [];
  let count = 0;
  let expected = Infinity;
  let first = 0;
  let last = 0;
  const server = createServer((req, res) => {
    if (req.url === '/dead') return; // never answers
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      res.writeHead(204).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
      latencies.push(now - Date.parse(body.timestamp));
      count++;
      if (count === 1) first = now;
      last = now;
      if (count === expected) process.send!({ kind: 'reached', at: now } satisfies FromReceiver);
    });
  });
  server.keepAliveTimeout = 60_000;
  process.on('message', (m: ToReceiver) => {
    if (m.kind === 'expect') {
      expected = m.count;
      if (count >= expected) process.send!({ kind: 'reached', at: last } satisfies FromReceiver);
    } else if (m.kind === 'reset') {
      latencies = [];
      count = 0;
      expected = Infinity;
    } else {
      process.send!({ kind: 'report', latencies, count, first, last } satisfies FromReceiver);
    }
  });
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => process.send!({ kind: 'listening', port: (server.address() as { port: number }).port } satisfies FromReceiver));
}

class ReceiverProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(): Promise<ReceiverProcess> {
    const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, BENCH_WEBHOOK_RECEIVER: '1' }, execArgv: ['--import', 'tsx'] });
    const port = await new Promise<number>((resolve) => child.once('message', (m: FromReceiver) => m.kind === 'listening' && resolve(m.port)));
    return new ReceiverProcess(child, port);
  }

  private ask<K extends FromReceiver['kind']>(msg: ToReceiver, kind: K): Promise<Extract<FromReceiver, { kind: K }>> {
    return new Promise((resolve) => {
      const on = (m: FromReceiver) => {
        if (m.kind !== kind) return;
        this.child.off('message', on);
        resolve(m as Extract<FromReceiver, { kind: K }>);
      };
      this.child.on('message', on);
      this.child.send(msg);
    });
  }

  reset(): void {
    this.child.send({ kind: 'reset' } satisfies ToReceiver);
  }

  reached(count: number): Promise<Extract<FromReceiver, { kind: 'reached' }>> {
    return this.ask({ kind: 'expect', count }, 'reached');
  }

  report(): Promise<Extract<FromReceiver, { kind: 'report' }>> {
    return this.ask({ kind: 'report' }, 'report');
  }

  stop(): void {
    this.child.disconnect();
  }
}

// ---- the runs ---------------------------------------------------------------------------------

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

type RunResult = { label: string; deliveries: number; seconds: number; perSecond: number; p50: number; p99: number };

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
  const urls = Array.from({ length: o.endpoints }, (_, i) => `http://127.0.0.1:${receiver.port}/hook/${i}`);
  await addEndpoints(ctx, tenantId, [...urls, ...extraUrls]);
  receiver.reset();
  const expected = o.events * (o.endpoints + (extraAnswer ? extraUrls.length : 0));
  const reached = receiver.reached(expected);
  const started = Date.now();
  await appendUsers(ctx, tenantId, o.events, perSecond);
  const { at } = await reached;
  const report = await receiver.report();
  const sorted = report.latencies.sort((a, b) => a - b);
  const seconds = (at - started) / 1000;
  return { label, deliveries: report.count, seconds, perSecond: report.count / seconds, p50: pct(sorted, 50), p99: pct(sorted, 99) };
}

async function rawRun(receiver: ReceiverProcess, o: Options): Promise<RunResult> {
  const agent = new Agent({ connections: null, pipelining: 1, keepAliveTimeout: 4_000 });
  const bodies: { url: string; body: string }[] = [];
  for (let i = 0; i < o.events; i++) {
    const body = JSON.stringify({ id: randomUUID(), type: 'user.created', timestamp: '', test: false, data: { user_id: randomUUID(), external_ref: `bench-${i}` } });
    for (let e = 0; e < o.endpoints; e++) bodies.push({ url: `http://127.0.0.1:${receiver.port}/hook/${e}`, body });
  }
  receiver.reset();
  const inFlight = Math.min(DEFAULT_LIMITS.total, DEFAULT_LIMITS.perEndpoint * o.endpoints);
  const times: number[] = [];
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < bodies.length) {
        const b = bodies[next++]!;
        const t0 = performance.now();
        // The timestamp is filled in at send time, so the receiver's latency is the request's own.
        const body = b.body.replace('"timestamp":""', `"timestamp":"${new Date().toISOString()}"`);
        const res = await request(b.url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body });
        await res.body.dump();
        times.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  await agent.close();
  times.sort((a, b) => a - b);
  return { label: `raw undici POSTs of the same bodies, ${inFlight} in flight`, deliveries: bodies.length, seconds, perSecond: bodies.length / seconds, p50: pct(times, 50), p99: pct(times, 99) };
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
    results.push(await engineRun(ctx, receiver, `burst to ${o.endpoints + 1} healthy endpoints (the same work as the next run)`, o, [`http://127.0.0.1:${receiver.port}/hook/${o.endpoints}`], null, true));
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
  console.log('| run | deliveries | seconds | deliveries/s | latency p50 ms | latency p99 ms |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const r of results) console.log(`| ${r.label} | ${r.deliveries} | ${r.seconds.toFixed(2)} | ${Math.round(r.perSecond)} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} |`);
  console.log('\nEngine runs: latency from the event\'s time in the log to its arrival at the receiver. Raw run: per request, send to answer.');
  process.exit(0);
}

if (process.env.BENCH_WEBHOOK_RECEIVER === '1') runReceiver();
