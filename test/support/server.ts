import { randomUUID } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect, vi } from 'vitest';
import { createContext, type ContextOptions } from '../../src/app/context.js';
import type { AppContext } from '../../src/server/appContext.js';
import { loadConfig } from '../../src/config.js';
import { buildServer } from '../../src/server/buildServer.js';
import { tempDir } from './tmp.js';

export type Response = LightMyRequestResponse;

export type TenantHandle = { id: string; name: string; created_at: string; apiKey: string };
export type UserBody = { id: string; external_ref: string | null; status: string; created_at: string };
export type TokenBody = { token: string; expires_at: string; scopes: string[] };

export type CallOptions = {
  /** The bearer secret; omitted = no Authorization header. */
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
};

export type TestApp = {
  app: FastifyInstance;
  ctx: AppContext;
  adminKey: string;
  dataDir: string;
  call: (method: InjectOptions['method'], url: string, options?: CallOptions) => Promise<Response>;
  createTenant: (name?: string) => Promise<TenantHandle>;
  createUser: (apiKey: string, body?: Record<string, unknown>) => Promise<UserBody>;
  mintToken: (apiKey: string, userId: string, body?: Record<string, unknown>) => Promise<TokenBody>;
  deleteUser: (apiKey: string, userId: string) => Promise<string>;
  /** Polls GET /v1/deletions/{job_id} until the job ended; returns the job. */
  waitForDeletion: (apiKey: string, jobId: string, timeoutMs?: number) => Promise<Record<string, unknown>>;
  close: () => Promise<void>;
};

/**
 * The whole service in-process: a real context on the embedded SQLite default in a fresh
 * temporary DATA_DIR, the real buildServer, requests through `app.inject`. The admin key is
 * the one the context generated on this "first start" (unless ADMIN_API_KEY is passed).
 */
/** A service with one tenant named `name` and one user of it (the common start of a route's tests). */
export async function tenantApp(name: string): Promise<{ t: TestApp; tenant: TenantHandle; user: UserBody }> {
  const t = await startTestApp();
  const tenant = await t.createTenant(name);
  return { t, tenant, user: await t.createUser(tenant.apiKey) };
}

export async function startTestApp(env: Record<string, string> = {}, options: ContextOptions = {}): Promise<TestApp> {
  const dataDir = tempDir('wellstream-server-');
  // TEST_LOG_LEVEL=warn shows a test app's warnings (e.g. what a close waits on); silent otherwise.
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...env } as NodeJS.ProcessEnv);
  const ctx = await createContext(config, options);
  let app: FastifyInstance;
  try {
    app = await buildServer(ctx);
  } catch (err) {
    await ctx.close();
    throw err;
  }
  const adminKey = env.ADMIN_API_KEY ?? ctx.generatedAdminKey;
  if (!adminKey) throw new Error('no admin key: the context did not generate one and ADMIN_API_KEY was not given');

  const call: TestApp['call'] = (method, url, options = {}) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
    const inject: InjectOptions = { method, url, headers };
    if (options.query) inject.query = options.query;
    if (options.body !== undefined) inject.payload = options.body as InjectOptions['payload'];
    return app.inject(inject);
  };

  // Tenant names are unique (issue 23): without a name each tenant gets one of its own.
  const createTenant: TestApp['createTenant'] = async (name = `acme-${randomUUID().slice(0, 8)}`) => {
    const res = await call('POST', '/v1/admin/tenants', { key: adminKey, body: { name } });
    expectStatus(res, 201);
    const b = res.json() as { id: string; name: string; created_at: string; api_key: string };
    return { id: b.id, name: b.name, created_at: b.created_at, apiKey: b.api_key };
  };

  const createUser: TestApp['createUser'] = async (apiKey, body = {}) => {
    const res = await call('POST', '/v1/users', { key: apiKey, body });
    expectStatus(res, 201);
    return res.json() as UserBody;
  };

  const mintToken: TestApp['mintToken'] = async (apiKey, userId, body = { scopes: ['read'] }) => {
    const res = await call('POST', `/v1/users/${userId}/tokens`, { key: apiKey, body });
    expectStatus(res, 201);
    return res.json() as TokenBody;
  };

  const deleteUser: TestApp['deleteUser'] = async (apiKey, userId) => {
    const res = await call('DELETE', `/v1/users/${userId}`, { key: apiKey });
    expectStatus(res, 202);
    return (res.json() as { job_id: string }).job_id;
  };

  const waitForDeletion: TestApp['waitForDeletion'] = async (apiKey, jobId, timeoutMs = 10_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const res = await call('GET', `/v1/deletions/${jobId}`, { key: apiKey });
      expectStatus(res, 200);
      const job = res.json() as Record<string, unknown>;
      if (job.status === 'done' || job.status === 'failed') return job;
      if (Date.now() > until) throw new Error(`deletion job ${jobId} still ${String(job.status)} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  return {
    app,
    ctx,
    adminKey,
    dataDir,
    call,
    createTenant,
    createUser,
    mintToken,
    deleteUser,
    waitForDeletion,
    close: async () => {
      await app.close();
      await ctx.close();
    },
  };
}

/** Asserts the status, showing the body when it differs (a bare status mismatch explains nothing). */
export function expectStatus(res: Response, status: number): void {
  if (res.statusCode !== status) {
    throw new Error(`expected ${status}, got ${res.statusCode}: ${res.body}`);
  }
}

/** Spec "Errors" 1 and "Conventions" 3: an RFC 9457 problem that repeats the X-Request-Id. */
export function expectProblem(res: Response, status: number): { type: string; title: string; status: number; detail: string; request_id: string } {
  expectStatus(res, status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json\b/);
  const body = res.json() as { type: string; title: string; status: number; detail: string; request_id: string };
  expect(body).toMatchObject({ type: 'about:blank', status });
  expect(typeof body.title).toBe('string');
  expect(body.title.length).toBeGreaterThan(0);
  expect(typeof body.detail).toBe('string');
  expect(typeof body.request_id).toBe('string');
  expect(body.request_id.length).toBeGreaterThan(0);
  expect(res.headers['x-request-id']).toBe(body.request_id);
  return body;
}

/** Spec "Authentication" 5: a 401 problem carrying `WWW-Authenticate: Bearer`. */
export function expectUnauthorized(res: Response): void {
  expectProblem(res, 401);
  expect(String(res.headers['www-authenticate'])).toMatch(/^Bearer\b/);
}

/** A promise with its resolver outside, to hold a step of the service until a test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/**
 * Holds every deletion job of `t` before its first step, so a deleted user stays `deleting` until
 * the gate is opened: the request writes the job's first event, the runner's claim of it waits.
 * The caller restores mocks (vi.restoreAllMocks) after the test.
 */
export function holdDeletionJobs(t: TestApp): { promise: Promise<void>; open: () => void } {
  const g = gate();
  const store = t.ctx.eventStore;
  const real = store.appendToStream.bind(store);
  vi.spyOn(store, 'appendToStream').mockImplementation(async (stream, events, options) => {
    if (stream.startsWith('deletion-') && events.some((e) => e.type !== 'deletion.requested')) await g.promise;
    return real(stream, events, options);
  });
  return g;
}
