/**
 * The webhook receiver the benchmarks deliver to: a child process of its own (so that receiving
 * takes no CPU from the process being measured) answering 204 to every POST, except to `/dead`,
 * which it never answers. It counts each delivery once (at least once delivery: a repeat of a
 * `webhook-id` at the same path is counted apart, as a duplicate) and keeps, per delivery, its
 * path, event type, `data.user_id` and arrival time, so a bench can match deliveries to the work
 * that caused them. `rawPosts` is the floor of the same HTTP work: bodies POSTed to it with undici.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { DEFAULT_LIMITS } from '../../src/processes/webhooks/deliveryLimits.js';

/** One delivery received: its path (`/hook/<n>`), event type, `data.user_id` (null when absent) and arrival (ms since the epoch). */
export type Arrival = [path: string, type: string, userId: string | null, at: number];

type ToReceiver = { kind: 'expect'; count: number } | { kind: 'report' } | { kind: 'reset' };
type FromReceiver =
  | { kind: 'listening'; port: number }
  | { kind: 'reached'; at: number }
  | { kind: 'report'; latencies: number[]; count: number; duplicates: number; first: number; last: number; arrivals: Arrival[] };

function runReceiver(): void {
  let latencies: number[] = [];
  let arrivals: Arrival[] = [];
  let seen = new Set<string>();
  let count = 0;
  let duplicates = 0;
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
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: string; type?: string; timestamp: string; data?: { user_id?: string } };
      const key = `${req.url} ${String(req.headers['webhook-id'] ?? body.id ?? '')}`;
      if (body.id !== undefined && seen.has(key)) {
        duplicates++;
        return;
      }
      seen.add(key);
      latencies.push(now - Date.parse(body.timestamp));
      arrivals.push([req.url ?? '', body.type ?? '', body.data?.user_id ?? null, now]);
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
      arrivals = [];
      seen = new Set();
      count = 0;
      duplicates = 0;
      expected = Infinity;
    } else {
      process.send!({ kind: 'report', latencies, count, duplicates, first, last, arrivals } satisfies FromReceiver);
    }
  });
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => process.send!({ kind: 'listening', port: (server.address() as { port: number }).port } satisfies FromReceiver));
}

export class ReceiverProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(): Promise<ReceiverProcess> {
    const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, BENCH_WEBHOOK_RECEIVER: '1' }, execArgv: ['--import', 'tsx'] });
    const port = await new Promise<number>((resolve) => child.once('message', (m: FromReceiver) => m.kind === 'listening' && resolve(m.port)));
    return new ReceiverProcess(child, port);
  }

  /** The URL of endpoint `n` on this receiver. */
  hook(n: number): string {
    return `http://127.0.0.1:${this.port}/hook/${n}`;
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

  /** Resolves when `count` distinct deliveries have arrived since the last reset, with the last one's arrival. */
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

/** The bare HTTP work of a burst of deliveries: how long, how many, each request's send-to-answer time, and this process's CPU for it. */
export type RawPostsResult = { inFlight: number; deliveries: number; seconds: number; perSecond: number; latencies: number[]; cpuMs: number };

/**
 * POSTs `bodies` (JSON, each with `"timestamp":""`, filled in at send time) to each of
 * `endpoints` endpoints of the receiver with undici, as many in flight as the webhook engine
 * allows for that many endpoints: no store, no signing, no retries. The receiver is reset first.
 */
export async function rawPosts(receiver: ReceiverProcess, bodies: string[], endpoints: number): Promise<RawPostsResult> {
  const agent = new Agent({ connections: null, pipelining: 1, keepAliveTimeout: 4_000 });
  const posts: { url: string; body: string }[] = [];
  for (const body of bodies) for (let e = 0; e < endpoints; e++) posts.push({ url: receiver.hook(e), body });
  receiver.reset();
  const inFlight = Math.min(DEFAULT_LIMITS.total, DEFAULT_LIMITS.perEndpoint * endpoints);
  const latencies: number[] = [];
  let next = 0;
  const cpu0 = process.cpuUsage();
  const started = Date.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < posts.length) {
        const b = posts[next++]!;
        const t0 = performance.now();
        // The timestamp is filled in at send time, so the receiver's latency is the request's own.
        const body = b.body.replace('"timestamp":""', `"timestamp":"${new Date().toISOString()}"`);
        const res = await request(b.url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body });
        await res.body.dump();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await agent.close();
  return { inFlight, deliveries: posts.length, seconds, perSecond: posts.length / seconds, latencies, cpuMs: (cpu.user + cpu.system) / 1000 };
}

if (process.env.BENCH_WEBHOOK_RECEIVER === '1') runReceiver();
