import { expect } from 'vitest';
import type { TestApp } from '../support/server.js';
import { expectStatus } from '../support/server.js';

/**
 * Runs the consent flow over HTTP: POST …/connections/{provider}, follow authorize_url to the
 * sandbox's authorisation page (it consents at once and redirects back), then hand the redirect
 * to the service's callback. Answers the callback's response.
 */
export async function connectThroughSandbox(t: TestApp, apiKey: string, userId: string, provider: string, body: Record<string, unknown> = {}) {
  const started = await t.call('POST', `/v1/users/${userId}/connections/${provider}`, { key: apiKey, body });
  expectStatus(started, 200);
  const authorizeUrl = (started.json() as { authorize_url: string }).authorize_url;
  const consent = await fetch(authorizeUrl, { redirect: 'manual' });
  expect(consent.status).toBe(302);
  const back = new URL(consent.headers.get('location')!);
  expect(back.pathname).toBe(`/oauth/${provider}/callback`);
  return { authorizeUrl, callback: await t.app.inject({ method: 'GET', url: back.pathname + back.search }) };
}
