import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { ProviderCallError } from '../../../src/sources/shared/providerCallError.js';

export type Answer = (req: Seen, res: ServerResponse, fake: FakeProvider) => void;

export type Seen = { method: string; path: string; headers: IncomingHttpHeaders; body: string };

/**
 * A provider (or a host a provider's answer names) on 127.0.0.1 that answers as the test says and
 * records every request it was sent, with its headers: a test asserts that a host received no
 * request, or none carrying the user's token.
 */
export class FakeProvider {
  readonly seen: Seen[] = [];
  /** Bytes the streaming answers wrote before their connection closed. */
  streamed = 0;
  private readonly server: Server;
  port = 0;

  private constructor(private readonly answer: Answer) {
    this.server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const seen = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.seen.push(seen);
        this.answer(seen, res, this);
      });
    });
  }

  static async start(answer: Answer = (_r, res) => json(res, 200, {})): Promise<FakeProvider> {
    const f = new FakeProvider(answer);
    await new Promise<void>((resolve, reject) => {
      f.server.once('error', reject);
      f.server.listen(0, '127.0.0.1', () => resolve());
    });
    f.port = (f.server.address() as AddressInfo).port;
    return f;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Requests that carried an Authorization header. */
  get authorized(): Seen[] {
    return this.seen.filter((s) => s.headers.authorization !== undefined);
  }

  /** Writes `chunk` for ever (as fast as the reader takes it) until the connection closes; resolves with the bytes written. */
  streamForever(res: ServerResponse, chunk = Buffer.alloc(64 * 1024, 0x20)): Promise<number> {
    return new Promise((resolve) => {
      let written = 0;
      let open = true;
      res.on('close', () => {
        open = false;
        this.streamed += written;
        resolve(written);
      });
      const pump = () => {
        while (open) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** What a proxy does with one request: answer it itself (true), or let it through with its JSON answer rewritten. */
export type Intercept = {
  answer?: (req: Seen, res: ServerResponse) => boolean;
  rewrite?: (req: Seen, body: Record<string, unknown>) => Record<string, unknown>;
};

/**
 * A provider that is the sandbox but for what the test changes (a link in an answer, a 429): it
 * forwards every request to `target` and may answer one itself or rewrite a JSON answer on the way.
 */
export function hostileProxy(target: string, intercept: () => Intercept): Promise<FakeProvider> {
  return FakeProvider.start((req, res) => {
    const i = intercept();
    if (i.answer?.(req, res)) return;
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k))) as Record<string, string>;
    void fetch(target + req.path, { method: req.method, headers, body: req.method === 'GET' || req.method === 'HEAD' ? undefined : req.body, redirect: 'manual' })
      .then(async (up) => {
        let body = Buffer.from(await up.arrayBuffer());
        if (i.rewrite && (up.headers.get('content-type') ?? '').includes('json') && body.length > 0) body = Buffer.from(JSON.stringify(i.rewrite(req, JSON.parse(body.toString('utf8')) as Record<string, unknown>)));
        const out: Record<string, string> = {};
        up.headers.forEach((v, k) => {
          if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive'].includes(k)) out[k] = v;
        });
        res.writeHead(up.status, out);
        res.end(body);
      })
      .catch(() => res.destroy());
  });
}

/**
 * A provider whose answer each test sets (`hosts.answer`) and another host a hostile answer may
 * name, started for the file and reset after each test.
 */
export function providerAndOtherHost(defaultAnswer: Answer): { provider: FakeProvider; other: FakeProvider; answer: Answer } {
  const hosts = { provider: undefined as unknown as FakeProvider, other: undefined as unknown as FakeProvider, answer: defaultAnswer };
  beforeAll(async () => {
    hosts.provider = await FakeProvider.start((r, res, f) => hosts.answer(r, res, f));
    hosts.other = await FakeProvider.start();
  });
  afterAll(async () => {
    await hosts.provider?.close();
    await hosts.other?.close();
  });
  afterEach(() => {
    hosts.provider.seen.length = 0;
    hosts.other.seen.length = 0;
    hosts.answer = defaultAnswer;
  });
  return hosts;
}

/** The ProviderCallError a call ends with (fails the test when it succeeds or throws anything else). */
export async function refusal(call: Promise<unknown>): Promise<ProviderCallError> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderCallError);
  return err as ProviderCallError;
}
