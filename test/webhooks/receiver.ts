import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type Received = {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The payload as the Standard Webhooks library verified it, or null when verification failed. */
  verified: Record<string, unknown> | null;
  verifyError: string | null;
  at: number;
};

/** What to answer: a status (with optional headers and body), `hang` (never answer) or `drop` (close the connection). */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang' | 'drop';

/**
 * A webhook receiver on 127.0.0.1 written the way docs/webhooks.md tells a tenant to: every
 * request is verified with the `standardwebhooks` library and the endpoint's `whsec_` secret.
 */
export class Receiver {
  readonly received: Received[] = [];
  private readonly secrets = new Map<string, string>();
  private readonly hanging: ServerResponse[] = [];
  answer: (r: Received) => Answer = () => ({ status: 204 });
  private server: Server;
  port = 0;

  private constructor() {
    this.server = this.makeServer();
  }

  static async start(): Promise<Receiver> {
    const r = new Receiver();
    await r.listen(0);
    return r;
  }

  private makeServer(): Server {
    return createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const path = req.url ?? '/';
        const secret = this.secrets.get(path);
        let verified: Record<string, unknown> | null = null;
        let verifyError: string | null = secret ? null : 'no secret for this path';
        if (secret) {
          try {
            verified = new Webhook(secret).verify(body, req.headers as Record<string, string>) as Record<string, unknown>;
          } catch (err) {
            verifyError = (err as Error).message;
          }
        }
        const r: Received = { path, headers: req.headers, body, verified, verifyError, at: Date.now() };
        this.received.push(r);
        const a = this.answer(r);
        if (a === 'hang') {
          this.hanging.push(res);
          return;
        }
        if (a === 'drop') {
          req.socket.destroy();
          return;
        }
        res.writeHead(a.status, a.headers ?? {});
        res.end(a.body ?? '');
      });
    });
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  trust(path: string, secret: string): void {
    this.secrets.set(path, secret);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async waitFor(predicate: (all: Received[]) => boolean, timeoutMs = 10_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      if (Date.now() > until) throw new Error(`receiver: condition not met after ${timeoutMs} ms (${this.received.length} requests received)`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Cuts the connections of every request held by `hang`. */
  dropHanging(): void {
    for (const res of this.hanging.splice(0)) res.destroy();
  }

  /** Answers the `count` oldest requests held by `hang` with `status`. */
  releaseHanging(count: number, status = 204): void {
    for (const res of this.hanging.splice(0, count)) {
      res.writeHead(status);
      res.end();
    }
  }

  get held(): number {
    return this.hanging.length;
  }

  /** Goes down: the port refuses connections until `up`. */
  async down(): Promise<void> {
    this.dropHanging();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Comes back on the same port. */
  async up(): Promise<void> {
    this.server = this.makeServer();
    await this.listen(this.port);
  }

  async close(): Promise<void> {
    if (this.server.listening) await this.down();
  }
}

/** Polls until `check` holds (no timed assertion: the limit only ends a test that would hang). */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > until) throw new Error(`condition not met after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
