import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../support/server.js';

/**
 * contracts §18: every route that takes a body checks its credential before reading the body.
 * Every route the service registers is looked at: one that takes a body either names its
 * credential (`config.auth`, checked by auth.ts in onRequest, with the scope of a user token) or
 * checks it in an onRequest hook of its own (push deliveries: their address, Authorization header
 * or the presence of their signature headers). Nothing else may take a body.
 */
const registered = vi.hoisted(() => [] as RouteOptions[]);
vi.mock('fastify', async (importOriginal) => {
  const real = await importOriginal<typeof import('fastify')>();
  const create = ((options?: Parameters<typeof real.default>[0]) => {
    const app = real.default(options);
    app.addHook('onRoute', (route) => void registered.push(route as RouteOptions));
    return app;
  }) as typeof real.default;
  return { ...real, default: create, fastify: create };
});

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const takesBody = (r: RouteOptions) => [r.method].flat().some((m) => BODY_METHODS.has(m));
const hasOwnOnRequest = (r: RouteOptions) => [r.onRequest ?? []].flat().length > 0;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('credentials before any body on every route (contracts §18)', () => {
  it('contracts §18: every route taking a body names its credential (and a user token its scope), or checks it in its own onRequest hook', () => {
    const bodyRoutes = registered.filter(takesBody);
    expect(bodyRoutes.length).toBeGreaterThan(30);
    const unchecked = bodyRoutes.filter((r) => {
      const auth = r.config?.auth ?? 'none';
      if (auth !== 'none') return [auth].flat().includes('user') && !r.config?.scope;
      return !hasOwnOnRequest(r);
    });
    expect(unchecked.map((r) => `${String(r.method)} ${r.url}`)).toEqual([]);
  });

  it('contracts §18: the routes that take a user token and a body need the upload scope (device uploads, resumable uploads) or the read scope (the agent interface)', () => {
    const scoped = Object.fromEntries(registered.filter((r) => takesBody(r) && [r.config?.auth].flat().includes('user')).map((r) => [`${[r.method].flat().join(',')} ${r.url}`, r.config?.scope]));
    expect(scoped).toEqual({
      'POST /v1/ingest/:device_slug': 'upload',
      'POST /v1/uploads/tus': 'upload',
      'PATCH /v1/uploads/tus/:provider/:upload_id': 'upload',
      'POST /mcp': 'read',
    });
  });
});
