import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { CookieJar } from '../../src/sandbox/consentBrowser.js';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

/**
 * POST /v1/users/{id}/connect-sessions (spec "Providers and connections"): a short-lived link to
 * a hosted page listing providers with the user's status and starting the same consent flow.
 * Driven over HTTP (the page is plain HTML forms).
 */
let sandbox: Sandbox;
let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;

beforeAll(async () => {
  sandbox = await startSandbox();
  t = await startTestApp({ PUBLIC_BASE_URL: 'https://health.example.com', OURA_BASE_URL: sandbox.urls.oura!, OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id, OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret });
  tenant = await t.createTenant('sessions-a');
  other = await t.createTenant('sessions-b');
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;

describe('connect sessions', () => {
  it('answers 201 {url, expires_at}; the page lists providers with the user’s status; its form starts the consent flow and the user comes back connected', async () => {
    const user = await t.createUser(tenant.apiKey);
    const before = Date.now();
    const res = await t.call('POST', `/v1/users/${user.id}/connect-sessions`, { key: tenant.apiKey, body: { ttl_seconds: 600 } });
    expectStatus(res, 201);
    const { url, expires_at } = res.json() as { url: string; expires_at: string };
    expect(url).toMatch(/^https:\/\/health\.example\.com\/connect\/cs_/);
    expect(Date.parse(expires_at) - before).toBeGreaterThan(590_000);
    expect(Date.parse(expires_at) - before).toBeLessThanOrEqual(601_000);

    const page = await t.app.inject({ method: 'GET', url: pathOf(url) });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('<li data-provider="oura">');
    expect(page.body).toMatch(/data-provider="oura"><h2>Oura<\/h2><p data-status="none">Not connected<\/p><form method="post"/);
    expect(page.body).toMatch(/data-provider="whoop">.*Not available/);

    const start = await t.app.inject({ method: 'POST', url: `${new URL(url).pathname}/oura`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
    expect(start.statusCode).toBe(303);
    // The button press binds the consent to this browser: the callback needs the cookie it set.
    const jar = new CookieJar();
    jar.take([start.headers['set-cookie'] as string]);
    const consent = await fetch(start.headers.location as string, { redirect: 'manual' });
    const back = new URL(consent.headers.get('location')!);
    const callback = await t.app.inject({ method: 'GET', url: back.pathname + back.search, headers: { cookie: jar.header() } });
    expect(callback.statusCode).toBe(302);
    const landing = new URL(callback.headers.location as string);
    expect(landing.pathname).toBe(new URL(url).pathname);
    expect(landing.searchParams.get('status')).toBe('connected');
    const after = await t.app.inject({ method: 'GET', url: landing.pathname + landing.search });
    expect(after.body).toContain('Oura is connected.');
    expect(after.body).toContain('<p data-status="active">Connected</p>');
  });

  it('the page names the app (the tenant) and the account (external_ref, else the end of the user id) before anything is pressed, and sends the browser nowhere by itself (issue 20, finding 5)', async () => {
    const named = await t.createUser(tenant.apiKey, { external_ref: 'patient-4711' });
    const page = async (userId: string) => {
      const { url } = (await t.call('POST', `/v1/users/${userId}/connect-sessions`, { key: tenant.apiKey, body: {} })).json() as { url: string };
      const res = await t.app.inject({ method: 'GET', url: pathOf(url) });
      expect(res.statusCode).toBe(200);
      return res.body;
    };
    const body = await page(named.id);
    expect(body).toContain('<strong data-app>sessions-a</strong>');
    expect(body).toContain('<strong data-user>patient-4711</strong>');
    // No refresh, no script: only a button press leaves the page.
    expect(body).not.toMatch(/http-equiv|<script/i);
    const anonymous = await t.createUser(tenant.apiKey);
    expect(await page(anonymous.id)).toContain(`<strong data-user>user …${anonymous.id.slice(-6)}</strong>`);
  });

  it('a consent started from the page and forwarded at the provider links nothing when completed in another browser; the browser that pressed the button still links (issue 20, finding 5)', async () => {
    const user = await t.createUser(tenant.apiKey);
    const { url } = (await t.call('POST', `/v1/users/${user.id}/connect-sessions`, { key: tenant.apiKey, body: {} })).json() as { url: string };
    const start = await t.app.inject({ method: 'POST', url: `${new URL(url).pathname}/oura`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
    expect(start.statusCode).toBe(303);
    const providerUrl = start.headers.location as string;
    const callbackOf = async () => pathOf((await fetch(providerUrl, { redirect: 'manual' })).headers.get('location')!);
    const elsewhere = await t.app.inject({ method: 'GET', url: await callbackOf() });
    expect(elsewhere.statusCode).toBe(403);
    expect(elsewhere.body).toContain('data-status="error"');
    const listed = async () => ((await t.call('GET', `/v1/users/${user.id}/connections`, { key: tenant.apiKey })).json() as { data: unknown[] }).data;
    expect(await listed()).toEqual([]);
    const jar = new CookieJar();
    jar.take([start.headers['set-cookie'] as string]);
    const mine = await t.app.inject({ method: 'GET', url: await callbackOf(), headers: { cookie: jar.header() } });
    expect(new URL(mine.headers.location as string).searchParams.get('status')).toBe('connected');
    expect(await listed()).toHaveLength(1);
  });

  it('an unknown or malformed link shows a 404 page; bad bodies are 400; another tenant’s user is 404', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/connect/cs_' + 'A'.repeat(43) })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/connect/nope' })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url: '/connect/nope/oura', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' })).statusCode).toBe(404);
    const user = await t.createUser(tenant.apiKey);
    expectProblem(await t.call('POST', `/v1/users/${user.id}/connect-sessions`, { key: tenant.apiKey, body: { ttl_seconds: 10 } }), 400);
    expectProblem(await t.call('POST', `/v1/users/${user.id}/connect-sessions`, { key: tenant.apiKey, body: { redirect_uri: 'http://evil.example.com/' } }), 400);
    expectProblem(await t.call('POST', `/v1/users/${user.id}/connect-sessions`, { key: other.apiKey, body: {} }), 404);
  });

  it('a link of a deleted user opens no page', async () => {
    const user = await t.createUser(tenant.apiKey);
    const { url } = (await t.call('POST', `/v1/users/${user.id}/connect-sessions`, { key: tenant.apiKey })).json() as { url: string };
    await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, user.id));
    expect((await t.app.inject({ method: 'GET', url: pathOf(url) })).statusCode).toBe(404);
  });
});
