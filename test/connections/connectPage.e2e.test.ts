import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { chromiumAvailable, chromiumMissing, freePort, launchChromium, openPage } from '../support/chromium.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

/**
 * The hosted connect page (spec "Providers and connections": connect sessions) as an end user meets
 * it, in headless Chromium: labelled, usable with the keyboard alone, and a click on a provider runs
 * the consent flow through the sandbox and comes back to the page showing the connection.
 */
if (!chromiumAvailable) {
  it.skip(`connect page in a browser: ${chromiumMissing}`, () => {});
} else {
  let sandbox: Sandbox;
  let t: TestApp;
  let tenant: TenantHandle;
  let browser: Browser;

  beforeAll(async () => {
    sandbox = await startSandbox();
    // The consent redirect comes back to PUBLIC_BASE_URL: the service listens where that says.
    const port = await freePort();
    t = await startTestApp({
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      OURA_BASE_URL: sandbox.urls.oura!,
      OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id,
      OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret,
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    tenant = await t.createTenant('connect-page');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await sandbox?.close();
  });

  describe('connect page in a browser', () => {
    it('lists providers under headings with labelled buttons, is reached by keyboard, and a connect click comes back connected', async () => {
      const user = await t.createUser(tenant.apiKey);
      const created = await t.call('POST', `/v1/users/${user.id}/connect-sessions`, { key: tenant.apiKey, body: {} });
      expectStatus(created, 201);
      const { url } = created.json() as { url: string };

      const { page, errors } = await openPage(browser);
      await page.goto(url);
      await page.getByRole('heading', { level: 1, name: 'Connect your health data' }).waitFor();
      expect(await page.getAttribute('html', 'lang')).toBe('en');
      // Whom a provider will be linked to, before any button (issue 20, finding 5).
      expect(await page.locator('[data-app]').textContent()).toBe('connect-page');
      expect(await page.locator('[data-user]').textContent()).toBe(`user …${user.id.slice(-6)}`);
      const oura = page.locator('li[data-provider="oura"]');
      expect(await oura.getByRole('heading', { level: 2 }).textContent()).toBe('Oura');
      expect(await oura.locator('[data-status]').textContent()).toBe('Not connected');
      // A provider the tenant cannot use says so instead of offering a dead button.
      expect(await page.locator('li[data-provider="whoop"]').textContent()).toContain('Not available');

      // Keyboard only: Tab reaches the Oura button (the first enabled one), Enter submits it.
      let focused = '';
      for (let i = 0; i < 20 && focused !== 'Connect Oura'; i++) {
        await page.keyboard.press('Tab');
        focused = String(await page.evaluate('document.activeElement && document.activeElement.textContent'));
      }
      expect(focused).toBe('Connect Oura');
      await Promise.all([page.waitForURL((u) => u.searchParams.get('status') === 'connected'), page.keyboard.press('Enter')]);

      // Back on the hosted page after the sandbox's consent redirect and the service's callback.
      expect(new URL(page.url()).pathname).toBe(new URL(url).pathname);
      await page.getByText('Oura is connected.').waitFor();
      expect(await oura.locator('[data-status]').getAttribute('data-status')).toBe('active');
      expect(await oura.getByRole('button').textContent()).toBe('Connect Oura again');
      const connections = await t.call('GET', `/v1/users/${user.id}/connections`, { key: tenant.apiKey });
      expect((connections.json() as { data: { provider: string; status: string }[] }).data).toContainEqual(expect.objectContaining({ provider: 'oura', status: 'active' }));
      expect(errors).toEqual([]);
    });

    it('a consent link forwarded to another browser links nothing there and shows an error page; the browser that opened it first still links (issue 20, finding 5)', async () => {
      const user = await t.createUser(tenant.apiKey);
      const started = await t.call('POST', `/v1/users/${user.id}/connections/oura`, { key: tenant.apiKey, body: {} });
      expectStatus(started, 200);
      const authorizeUrl = (started.json() as { authorize_url: string }).authorize_url;
      const connected = async () => ((await t.call('GET', `/v1/users/${user.id}/connections`, { key: tenant.apiKey })).json() as { data: unknown[] }).data;

      // The user's browser opens the link (its request context shares the browser's cookies) and pauses before the provider's page.
      const mine = await openPage(browser);
      const start = await mine.page.context().request.get(authorizeUrl, { maxRedirects: 0 });
      expect(start.status()).toBe(302);
      const providerUrl = start.headers().location!;
      expect(new URL(providerUrl).origin).toBe(sandbox.urls.oura);

      // Forwarded: another browser opens the link, then the provider's page itself.
      const other = await openPage(browser);
      expect((await other.page.goto(authorizeUrl))?.status()).toBe(403);
      await other.page.getByText('started in another browser').waitFor();
      await other.page.goto(providerUrl);
      expect(new URL(other.page.url()).pathname).toBe('/oauth/oura/callback');
      await other.page.getByText('started in another browser').waitFor();
      expect(await connected()).toEqual([]);

      await mine.page.goto(providerUrl);
      await mine.page.getByText('Your Oura account is connected.').waitFor();
      expect(await connected()).toHaveLength(1);
      expect(mine.errors).toEqual([]);
    });
  });
}
