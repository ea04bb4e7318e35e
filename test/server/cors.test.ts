import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { tusMetadata } from '../ingest/tusHelpers.js';

/**
 * contracts §17 "Browser apps": CORS_ORIGINS lets a web app on a listed origin call the routes a
 * user token may call and the tus routes (src/server/cors.ts). Preflights carry no credential.
 */
const APP = 'https://app.example.org';
const LOCAL = 'http://localhost:5173';
const REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Upload-Id', 'Idempotency-Key', 'Tus-Resumable', 'Upload-Length', 'Upload-Offset', 'Upload-Metadata'];
const EXPOSED = ['Location', 'Upload-Offset', 'Upload-Length', 'Upload-Expires', 'Tus-Resumable', 'Tus-Version', 'Tus-Max-Size', 'Tus-Extension', 'Retry-After'];
const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers', 'access-control-max-age'];

const listOf = (header: unknown) => String(header ?? '').split(',').map((s) => s.trim().toLowerCase());
const noCors = (res: { headers: Record<string, unknown> }) => {
  for (const h of CORS_HEADERS) expect(res.headers[h], h).toBeUndefined();
};
const preflight = (t: TestApp, url: string, origin: string, method: string, headers = 'authorization, content-type') =>
  t.app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });

async function userWithToken(t: TestApp, tenant: TenantHandle) {
  const user = await t.createUser(tenant.apiKey);
  return { userId: user.id, token: (await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload', 'read'] })).token };
}
const tusCreation = (token: string, origin: string, uploadId: string): InjectOptions => ({
  method: 'POST',
  url: '/v1/uploads/tus',
  headers: { origin, authorization: `Bearer ${token}`, 'tus-resumable': '1.0.0', 'upload-length': '10', 'upload-metadata': tusMetadata({ provider: 'apple-health', upload_id: uploadId }) },
});

describe('CORS_ORIGINS set (contracts §17)', () => {
  let t: TestApp;
  let tenant: TenantHandle;
  beforeAll(async () => {
    t = await startTestApp({ CORS_ORIGINS: `${APP}, ${LOCAL}` });
    tenant = await t.createTenant('cors');
  });
  afterAll(async () => t?.close());

  it('a preflight for the tus PATCH of an upload (a path with no OPTIONS route) is 204 with its methods and the request headers, before any credential', async () => {
    const res = await preflight(t, '/v1/uploads/tus/apple-health/some-upload', APP, 'PATCH', 'authorization, tus-resumable, upload-offset, content-type');
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(listOf(res.headers['access-control-allow-methods'])).toEqual(expect.arrayContaining(['patch', 'head', 'delete']));
    expect(listOf(res.headers['access-control-allow-headers'])).toEqual(expect.arrayContaining(REQUEST_HEADERS.map((h) => h.toLowerCase())));
    expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(String(res.headers.vary)).toMatch(/Origin/);
    // The tus creation address has its own OPTIONS (discovery): a preflight there is answered the same way.
    const creation = await preflight(t, '/v1/uploads/tus', LOCAL, 'POST', 'authorization, tus-resumable, upload-length, upload-metadata');
    expect(creation.statusCode).toBe(204);
    expect(creation.headers['access-control-allow-origin']).toBe(LOCAL);
    expect(listOf(creation.headers['access-control-allow-methods'])).toContain('post');
  });

  it('a preflight for user-token GETs (/v1/me/uploads, /v1/me/archive) and the upload POST is answered; the actual answers allow the origin and expose the tus and back-off headers', async () => {
    for (const [url, method] of [['/v1/me/uploads/apple-health/u-1', 'GET'], ['/v1/me/archive', 'GET'], ['/v1/ingest/device-a', 'POST']] as const) {
      const res = await preflight(t, url, APP, method);
      expect(res.statusCode, url).toBe(204);
      expect(listOf(res.headers['access-control-allow-methods']), url).toContain(method.toLowerCase());
    }
    const { userId, token } = await userWithToken(t, tenant);
    const created = await t.app.inject(tusCreation(token, APP, 'cors-1'));
    expect(created.statusCode).toBe(201);
    expect(created.headers['access-control-allow-origin']).toBe(APP);
    expect(listOf(created.headers['access-control-expose-headers'])).toEqual(EXPOSED.map((h) => h.toLowerCase()));
    const discovery = await t.app.inject({ method: 'OPTIONS', url: '/v1/uploads/tus', headers: { origin: APP } });
    expect(discovery.statusCode).toBe(204);
    expect(discovery.headers['tus-version']).toBe('1.0.0');
    expect(discovery.headers['access-control-allow-origin']).toBe(APP);
    const mine = await t.app.inject({ method: 'GET', url: '/v1/me/uploads/apple-health/cors-1', headers: { origin: APP, authorization: `Bearer ${token}` } });
    expect(mine.statusCode).toBe(200);
    expect(mine.headers['access-control-allow-origin']).toBe(APP);
    // A refusal is readable by the app too (its status and problem), credential or not.
    const refused = await t.app.inject({ method: 'GET', url: '/v1/me/uploads/apple-health/cors-1', headers: { origin: APP } });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(APP);
    // Another tenant's user still finds nothing, CORS or not.
    const other = await userWithToken(t, await t.createTenant('cors-other'));
    const stranger = await t.app.inject({ method: 'HEAD', url: '/v1/uploads/tus/apple-health/cors-1', headers: { origin: APP, authorization: `Bearer ${other.token}`, 'tus-resumable': '1.0.0' } });
    expect(stranger.statusCode).toBe(404);
    expect(userId).not.toBe(other.userId);
  });

  it('an unlisted origin gets no CORS header, on a preflight or an answer', async () => {
    const { token } = await userWithToken(t, tenant);
    noCors(await preflight(t, '/v1/uploads/tus/apple-health/x', 'https://evil.example', 'PATCH'));
    noCors(await preflight(t, '/v1/uploads/tus/apple-health/x', 'https://app.example.org.evil.example', 'PATCH'));
    const created = await t.app.inject(tusCreation(token, 'https://evil.example', 'cors-2'));
    expect(created.statusCode).toBe(201);
    noCors(created);
  });

  it('routes a user token cannot call (tenant and admin keys), and /mcp, which refuses other origins, get no CORS header even from a listed origin', async () => {
    noCors(await preflight(t, '/v1/users', APP, 'POST'));
    noCors(await preflight(t, `/v1/admin/tenants/${tenant.id}/api-keys`, APP, 'POST'));
    noCors(await preflight(t, '/mcp', APP, 'POST'));
    const users = await t.app.inject({ method: 'GET', url: '/v1/users', headers: { origin: APP, authorization: `Bearer ${tenant.apiKey}` } });
    expect(users.statusCode).toBe(200);
    noCors(users);
  });
});

describe('CORS_ORIGINS unset (the default): nothing changes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t?.close());

  it('no preflight is answered and no answer carries a CORS header', async () => {
    const tenant = await t.createTenant('cors-none');
    const { token } = await userWithToken(t, tenant);
    const res = await preflight(t, '/v1/uploads/tus/apple-health/x', APP, 'PATCH');
    expect(res.statusCode).toBe(404);
    noCors(res);
    const created = await t.app.inject(tusCreation(token, APP, 'cors-3'));
    expect(created.statusCode).toBe(201);
    noCors(created);
  });

  it('refuses a CORS_ORIGINS entry that is not an origin as a browser sends it, at start-up', async () => {
    await expect(startTestApp({ CORS_ORIGINS: 'https://app.example.org/' })).rejects.toThrow(/CORS_ORIGINS/);
    await expect(startTestApp({ CORS_ORIGINS: 'app.example.org' })).rejects.toThrow(/CORS_ORIGINS/);
    await expect(startTestApp({ CORS_ORIGINS: '*' })).rejects.toThrow(/CORS_ORIGINS/);
  });
});
