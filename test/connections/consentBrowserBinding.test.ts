import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import { CookieJar, pathAndQueryOf } from '../../src/sandbox/consentBrowser.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { injectGet } from './consentFlow.js';

/**
 * Issue 20, finding 5 (RFC 6749 §10.12): authorize_url is not a bearer link. The first browser to
 * open it gets a cookie binding the consent state to it, and only a callback bringing that cookie
 * links anything; a link forwarded to (or opened in) another browser ends on an error page with
 * nothing linked, and the originating browser can still finish.
 */
let sandbox: Sandbox;
let t: TestApp;
let tenant: TenantHandle;

beforeAll(async () => {
  sandbox = await startSandbox();
  t = await startTestApp({
    PUBLIC_BASE_URL: 'https://health.example.com',
    OURA_BASE_URL: sandbox.urls.oura!,
    OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id,
    OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret,
  });
  tenant = await t.createTenant('binding');
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

const connections = async (userId: string) => {
  const res = await t.call('GET', `/v1/users/${userId}/connections`, { key: tenant.apiKey });
  expectStatus(res, 200);
  return (res.json() as { data: { provider: string; status: string }[] }).data;
};

async function authorizeUrlFor(userId: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await t.call('POST', `/v1/users/${userId}/connections/oura`, { key: tenant.apiKey, body });
  expectStatus(res, 200);
  return (res.json() as { authorize_url: string }).authorize_url;
}

/** A browser: its cookies and its GETs to the service. */
function browser() {
  const jar = new CookieJar();
  const get = async (url: string) => {
    const answer = await injectGet(t)(pathAndQueryOf(url), jar.header());
    jar.take(answer.setCookies);
    return answer;
  };
  return { jar, get };
}

/** The sandbox's consent page for a provider URL: it agrees at once and answers the callback address with a code. */
async function consentAt(providerUrl: string): Promise<string> {
  const res = await fetch(providerUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return res.headers.get('location')!;
}

describe('consent state bound to the browser that started the flow (issue 20, finding 5; RFC 6749 §10.12)', () => {
  it('opening authorize_url sets a consent cookie: HttpOnly, SameSite=Lax, Secure under an https PUBLIC_BASE_URL, path /oauth/{provider}/, 10 minutes', async () => {
    const user = await t.createUser(tenant.apiKey);
    const start = await browser().get(await authorizeUrlFor(user.id));
    expect(start.status).toBe(302);
    expect(start.setCookies).toHaveLength(1);
    const [pair, ...attributes] = start.setCookies[0]!.split(/;\s*/);
    expect(pair).toMatch(/^wellstream_consent_[0-9a-f]{16}=[A-Za-z0-9_-]{43}$/);
    expect(attributes.map((a) => a.toLowerCase()).sort()).toEqual(['httponly', 'max-age=600', 'path=/oauth/oura/', 'samesite=lax', 'secure']);
    expect(start.response.headers['referrer-policy']).toBe('no-referrer');
  });

  it('a consent forwarded after the first hop and completed in another browser (no cookie, or another one) links nothing and shows an error page; the originating browser still links', async () => {
    const user = await t.createUser(tenant.apiKey);
    const mine = browser();
    const start = await mine.get(await authorizeUrlFor(user.id));
    expect(start.status).toBe(302);
    const providerUrl = start.location!;

    // The provider's page (state included) is forwarded: a stranger consents with their own account.
    const strangerCallback = await consentAt(providerUrl);
    const noCookie = await browser().get(strangerCallback);
    expect(noCookie.status).toBe(403);
    expect(noCookie.response.headers['content-type']).toMatch(/text\/html/);
    expect(noCookie.response.body).toContain('data-status="error"');
    expect(noCookie.response.body).toContain('started in another browser');
    const other = browser();
    const cookieName = mine.jar.header().split('=')[0]!;
    other.jar.take([`${cookieName}=${'A'.repeat(43)}`]);
    expect((await other.get(strangerCallback)).status).toBe(403);
    expect(await connections(user.id)).toEqual([]);

    // The state was not used up by the refusals: the browser that started the flow finishes it.
    const mineCallback = await mine.get(await consentAt(providerUrl));
    expect(mineCallback.status).toBe(200);
    expect(mineCallback.response.body).toContain('data-status="connected"');
    expect(await connections(user.id)).toEqual([expect.objectContaining({ provider: 'oura', status: 'active' })]);
  });

  it('authorize_url opened in a second browser is refused with an error page and no cookie; the first browser may open it again', async () => {
    const user = await t.createUser(tenant.apiKey);
    const url = await authorizeUrlFor(user.id, { redirect_uri: 'https://app.example.com/cb' });
    const first = browser();
    expect((await first.get(url)).status).toBe(302);
    const second = browser();
    const refused = await second.get(url);
    expect(refused.status).toBe(403);
    expect(refused.setCookies).toEqual([]);
    expect(refused.response.body).toContain('started in another browser');
    expect(second.jar.header()).toBe('');
    // Not even the tenant's redirect_uri: the stranger is no user of the app's.
    expect(refused.location).toBeNull();
    const again = await first.get(url);
    expect(again.status).toBe(302);
    expect(again.setCookies).toEqual([]);
    const back = await first.get(await consentAt(again.location!));
    expect(new URL(back.location!).searchParams.get('status')).toBe('connected');
  });

  it('of two browsers opening authorize_url at the same moment exactly one owns the flow', async () => {
    const user = await t.createUser(tenant.apiKey);
    const url = await authorizeUrlFor(user.id);
    const answers = await Promise.all([browser().get(url), browser().get(url), browser().get(url)]);
    expect(answers.map((a) => a.status).sort()).toEqual([302, 403, 403]);
  });

  it('refuses, with an error page and nothing changed, a start address without a state, with an unknown or used state, or of another provider', async () => {
    const user = await t.createUser(tenant.apiKey);
    const url = new URL(await authorizeUrlFor(user.id));
    const b = browser();
    for (const path of ['/oauth/oura/authorize', '/oauth/oura/authorize?state=nope', `/oauth/fitbit/authorize${url.search}`, `/oauth/nope/authorize${url.search}`]) {
      const res = await b.get(`https://health.example.com${path}`);
      expect(res.status, path).toBe(400);
      expect(res.response.body).toContain('data-status="error"');
      expect(res.setCookies).toEqual([]);
    }
    // Used: once the flow finished, its start address opens nothing.
    const done = browser();
    const start = await done.get(url.toString());
    await done.get(await consentAt(start.location!));
    expect((await done.get(url.toString())).status).toBe(400);
  });
});
