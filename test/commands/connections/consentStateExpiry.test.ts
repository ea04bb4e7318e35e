import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserHash } from '../../../commands/connections/bindConsent.js';
import { completeConsent } from '../../../commands/connections/completeConsent.js';
import { requestConsent, stateHash } from '../../../commands/connections/requestConsent.js';
import { connectedProvider } from '../../../src/catalog/providers.js';
import { startTestApp, type TestApp } from '../../support/server.js';

/** Spec "Limits": the consent state lives 10 minutes and is single use. The clock is the command's `at`. */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

// Never called: an expired state is refused before any exchange.
const client = { clientId: 'SANDBOXOURACLIENT', clientSecret: 's', baseUrl: 'http://127.0.0.1:9' };

describe('consent state lifetime (spec "Limits": 10 minutes, single use)', () => {
  it('refuses a state 10 minutes after it was issued, and then knows it no more', async () => {
    const tenant = await t.createTenant('expiry');
    const user = await t.createUser(tenant.apiKey);
    const issued = Date.parse('2026-01-01T10:00:00Z');
    const browser = browserHash('the browser that started it');
    const { state } = await requestConsent(t.ctx.eventStore, t.ctx.valueSealer, t.ctx.grants, client, {
      tenantId: tenant.id,
      userId: user.id,
      provider: 'oura',
      redirectUri: 'https://app.example.com/cb',
      callbackUrl: 'https://health.example.com/oauth/oura/callback',
      at: new Date(issued).toISOString(),
      by: 'test',
      browserHash: browser,
    });
    const callback = (atMs: number) =>
      completeConsent(t.ctx.eventStore, t.ctx.valueSealer, t.ctx.credentials, t.ctx.grants, client, {
        tenantId: tenant.id,
        userId: user.id,
        provider: connectedProvider('oura')!,
        stateHash: stateHash(state),
        code: 'code',
        error: null,
        scope: null,
        callbackUrl: 'https://health.example.com/oauth/oura/callback',
        application: 'instance',
        at: new Date(atMs).toISOString(),
        browserHash: browser,
      });
    const late = await callback(issued + 10 * 60_000);
    expect(late).toMatchObject({ status: 'error', redirectUri: 'https://app.example.com/cb' });
    expect(late.error).toMatch(/expired/);
    expect(await callback(issued + 60_000)).toMatchObject({ status: 'error', redirectUri: null, error: 'unknown or already used consent state' });
  });
});
