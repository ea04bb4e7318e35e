import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSamples, quantity } from './records/pipelineFixtures.js';
import { startTestApp, type TestApp } from '../support/server.js';
import { consentStartUrl } from '../../src/server/routes/oauthFlow.js';
import { instanceUrls } from '../../queries/connections/providerKeys.js';

/**
 * Issue 20, finding 6: behind a proxy that names the service without its port (nginx's `$host`),
 * absolute links (FHIR Bundle `next`, contracts §10) and the /mcp origin check (spec "Agent
 * interface") use PUBLIC_BASE_URL, not the Host of the request; X-Forwarded-* count only from the
 * proxy TRUST_PROXY names. Requests here come from 127.0.0.1 (fastify inject).
 */
type Link = { relation: string; url: string };
const at = (i: number) => new Date(Date.parse('2026-11-01T00:00:00Z') + i * 600_000).toISOString();
const mcpBody = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function appWithData(env: Record<string, string>) {
  const t = await startTestApp(env);
  const tenant = await t.createTenant('public-address');
  const userId = (await t.createUser(tenant.apiKey)).id;
  await ingestSamples(t, { userId, tenantId: tenant.id }, [0, 1, 2].map((i) => quantity({ type: 'heart_rate', unit: 'count/min', start_date: at(i), end_date: at(i), value: 60 + i })));
  const readToken = (await t.mintToken(tenant.apiKey, userId, { scopes: ['read'] })).token;
  return { t, apiKey: tenant.apiKey, userId, readToken };
}

async function nextLink(t: TestApp, apiKey: string, url: string, headers: Record<string, string>): Promise<string> {
  const res = await t.call('GET', url, { key: apiKey, headers });
  expect(res.statusCode).toBe(200);
  const next = (res.json() as { link: Link[] }).link.find((l) => l.relation === 'next');
  expect(next).toBeDefined();
  return next!.url;
}

describe('PUBLIC_BASE_URL behind a proxy (issue 20, finding 6)', () => {
  let app: Awaited<ReturnType<typeof appWithData>>;
  beforeAll(async () => {
    app = await appWithData({ PUBLIC_BASE_URL: 'https://health.example.com:8443', TRUST_PROXY: 'loopback' });
  });
  afterAll(async () => app?.t.close());

  // What nginx with `proxy_set_header Host $host` sends for https://health.example.com:8443.
  const proxied = { host: 'health.example.com', 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' };

  it('FHIR next links are absolute URLs at PUBLIC_BASE_URL whatever Host the proxy passed, and following them pages on', async () => {
    const first = await nextLink(app.t, app.apiKey, `/v1/users/${app.userId}/fhir/Observation?_count=1`, proxied);
    expect(first.startsWith(`https://health.example.com:8443/v1/users/${app.userId}/fhir/Observation?`)).toBe(true);
    const url = new URL(first);
    const second = await nextLink(app.t, app.apiKey, url.pathname + url.search, proxied);
    expect(second).not.toBe(first);
    const metadata = await app.t.call('GET', `/v1/users/${app.userId}/fhir/Patient`, { key: app.apiKey, headers: { host: 'internal:8080' } });
    expect((metadata.json() as { link: Link[] }).link[0]!.url).toBe(`https://health.example.com:8443/v1/users/${app.userId}/fhir/Patient`);
  });

  it('/mcp accepts a browser of the public origin even though the proxy dropped the port, and refuses other origins, a rebound DNS name (Origin and Host alike) and the wrong scheme', async () => {
    const mcp = (headers: Record<string, string>) => app.t.call('POST', '/mcp', { key: app.readToken, body: mcpBody, headers: { ...mcpHeaders, ...headers } });
    expect((await mcp({ ...proxied, origin: 'https://health.example.com:8443' })).statusCode).toBe(200);
    expect((await mcp({ ...proxied, origin: 'https://evil.example' })).statusCode).toBe(403);
    expect((await mcp({ host: 'rebound.example:8080', origin: 'http://rebound.example:8080' })).statusCode).toBe(403);
    expect((await mcp({ ...proxied, origin: 'http://health.example.com:8443' })).statusCode).toBe(403);
    expect((await mcp({ ...proxied, origin: 'null' })).statusCode).toBe(403);
    // Clients that are not browsers send no Origin.
    expect((await mcp(proxied)).statusCode).toBe(200);
  });
});

describe('without PUBLIC_BASE_URL: the address the request came to, X-Forwarded-* only from TRUST_PROXY', () => {
  it('a trusted proxy’s X-Forwarded-Proto and -Host make the links; an untrusted peer’s are ignored', async () => {
    const trusted = await appWithData({ TRUST_PROXY: '127.0.0.1' });
    const untrusted = await appWithData({});
    try {
      const headers = { host: 'internal:8080', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.org:8443' };
      expect(await nextLink(trusted.t, trusted.apiKey, `/v1/users/${trusted.userId}/fhir/Observation?_count=1`, headers)).toMatch(/^https:\/\/api\.example\.org:8443\/v1\//);
      expect(await nextLink(untrusted.t, untrusted.apiKey, `/v1/users/${untrusted.userId}/fhir/Observation?_count=1`, headers)).toMatch(/^http:\/\/internal:8080\/v1\//);
      const mcp = (a: typeof trusted, headers: Record<string, string>) => a.t.call('POST', '/mcp', { key: a.readToken, body: mcpBody, headers: { ...mcpHeaders, ...headers } });
      expect((await mcp(trusted, { ...headers, origin: 'https://api.example.org:8443' })).statusCode).toBe(200);
      expect((await mcp(untrusted, { ...headers, origin: 'https://api.example.org:8443' })).statusCode).toBe(403);
    } finally {
      await trusted.t.close();
      await untrusted.t.close();
    }
  });

  it('refuses a TRUST_PROXY that is not true, false, a hop count or addresses and ranges at start-up', async () => {
    await expect(startTestApp({ TRUST_PROXY: 'the nginx' })).rejects.toThrow(/TRUST_PROXY/);
  });
});

describe('PUBLIC_BASE_URL with a path (contracts §17: every absolute address keeps it)', () => {
  it('tus Location, FHIR links and the connect-session link are built at http://host:port/ws, and the tus Location answers there (the proxy strips /ws)', async () => {
    const base = 'http://health.example.com:8080/ws';
    const a = await appWithData({ PUBLIC_BASE_URL: `${base}/` });
    try {
      const tenant = await a.t.createTenant('public-address-path');
      const user = await a.t.createUser(tenant.apiKey);
      const { token } = await a.t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
      const tus = { 'tus-resumable': '1.0.0', authorization: `Bearer ${token}` };
      const metadata = `provider ${Buffer.from('apple-health').toString('base64')},upload_id ${Buffer.from('at-ws').toString('base64')}`;
      const created = await a.t.app.inject({ method: 'POST', url: '/v1/uploads/tus', headers: { ...tus, 'upload-length': '10', 'upload-metadata': metadata } });
      expect(created.statusCode).toBe(201);
      const location = created.headers.location as string;
      expect(location).toBe(`${base}/v1/uploads/tus/apple-health/at-ws`);
      // What the proxy publishing /ws forwards: the path after it.
      const forwarded = new URL(location).pathname.slice('/ws'.length);
      expect((await a.t.app.inject({ method: 'HEAD', url: forwarded, headers: tus })).headers['upload-offset']).toBe('0');

      expect(await nextLink(a.t, a.apiKey, `/v1/users/${a.userId}/fhir/Observation?_count=1`, {})).toMatch(new RegExp(`^${base}/v1/users/${a.userId}/fhir/Observation\\?`));
      const session = await a.t.call('POST', `/v1/users/${user.id}/connect-sessions`, { key: tenant.apiKey, body: {} });
      expect(session.statusCode).toBe(201);
      expect((session.json() as { url: string }).url.startsWith(`${base}/connect/`)).toBe(true);
      // authorize_url and the OAuth callback registered at the provider are built from the same base.
      expect(consentStartUrl(a.t.ctx.config.publicBaseUrl, 'oura', 'https://cloud.ouraring.com/oauth/authorize?state=s')).toBe(`${base}/oauth/oura/authorize?state=s`);
      expect(instanceUrls(a.t.ctx.config.publicBaseUrl, 'oura').redirect).toBe(`${base}/oauth/oura/callback`);
    } finally {
      await a.t.close();
    }
  });
});
