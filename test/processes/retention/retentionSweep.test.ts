import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnectSession, openConnectSession } from '../../../commands/connections/connectSession.js';
import { requestConsent, stateHash } from '../../../commands/connections/requestConsent.js';
import { CONNECT_SESSIONS } from '../../../projections/connections/connectSessionsProjection.js';
import { CONSENT_STATES } from '../../../projections/connections/connectionsProjection.js';
import { RETENTION_GRACE_MS, sweepExpired } from '../../../src/processes/retention/retentionSweep.js';
import { startTestApp, type TestApp } from '../../support/server.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { mintUserToken } from '../../../commands/users/mintUserToken.js';
import { userTokensStream } from '../../../commands/users/userTokens.js';

const USER_TOKENS = 'user_tokens';

/**
 * Issue 26, retention: pending consent states (10 minutes) and connect sessions expire; a day
 * past their expiry the sweep removes a consent state's row and a connect session's stream and
 * row, at most `limit` of each per pass, oldest first; live ones stay.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const client = { clientId: 'SANDBOXOURACLIENT', clientSecret: 's', baseUrl: 'http://127.0.0.1:9' };

describe('retention sweep (issue 26: consent states and connect sessions expire)', () => {
  it('removes expired consent states and connect sessions a day after expiry, bounded per pass, and leaves live ones', async () => {
    const tenant = await t.createTenant('retention');
    const user = await t.createUser(tenant.apiKey);
    const now = Date.now();
    const old = new Date(now - RETENTION_GRACE_MS - 3600_000).toISOString();
    const consent = (at: string) =>
      requestConsent(t.ctx.eventStore, t.ctx.valueSealer, t.ctx.grants, client, {
        tenantId: tenant.id, userId: user.id, provider: 'oura', redirectUri: null, callbackUrl: 'https://health.example.com/oauth/oura/callback', at, by: 'test',
      });
    const expiredStates = [await consent(old), await consent(old), await consent(old)];
    const live = await consent(new Date(now).toISOString());
    const session = (at: string, ttlSeconds: number) => createConnectSession(t.ctx.eventStore, { tenantId: tenant.id, userId: user.id, redirectUri: 'https://app.example.com/done', ttlSeconds, at, by: 'test' });
    const expiredSessions = [await session(old, 3600), await session(old, 3600)];
    const liveSession = await session(new Date(now).toISOString(), 3600);
    await t.ctx.projectors.waitForIdle();
    expect(await t.ctx.readStore.count(CONSENT_STATES, { user_id: user.id })).toBe(4);
    expect(await t.ctx.readStore.count(CONNECT_SESSIONS, { user_id: user.id })).toBe(3);

    // Bounded: two of each at most per pass.
    expect(await sweepExpired(t.ctx.readStore, t.ctx.eventStore, now, 2)).toMatchObject({ consentStates: 2, connectSessions: 2 });
    expect(await sweepExpired(t.ctx.readStore, t.ctx.eventStore, now, 2)).toMatchObject({ consentStates: 1, connectSessions: 0 });
    expect(await sweepExpired(t.ctx.readStore, t.ctx.eventStore, now, 2)).toMatchObject({ consentStates: 0, connectSessions: 0 });

    for (const s of expiredStates) expect(await t.ctx.readStore.get(CONSENT_STATES, stateHash(s.state))).toBeNull();
    expect(await t.ctx.readStore.get(CONSENT_STATES, stateHash(live.state))).not.toBeNull();
    expect(await t.ctx.readStore.count(CONNECT_SESSIONS, { user_id: user.id })).toBe(1);
    // The expired sessions' streams are erased; the live one still opens.
    for (const s of expiredSessions) expect(await openConnectSession(t.ctx.eventStore, s.secret, new Date(old))).toBeNull();
    expect(await openConnectSession(t.ctx.eventStore, liveSession.secret, new Date(now))).not.toBeNull();
  });

  it('removes user token rows a day after they expire, bounded per pass, and keeps live tokens; the mints stay on the token stream', async () => {
    const tenant = await t.createTenant('retention-tokens');
    const user = await t.createUser(tenant.apiKey);
    const now = Date.now();
    const old = new Date(now - RETENTION_GRACE_MS - 2 * 3600_000).toISOString();
    const mint = (at: string) =>
      mintUserToken(t.ctx.eventStore, { tenantId: tenant.id, userId: user.id, tokenId: randomUUID(), tokenHash: randomBytes(32).toString('hex'), scopes: ['read'], ttlSeconds: 60, at, by: 'test' });
    await mint(old);
    await mint(old);
    await mint(old);
    await mint(new Date(now).toISOString());
    await t.ctx.projectors.waitForIdle();
    expect(await t.ctx.readStore.count(USER_TOKENS, { user_id: user.id })).toBe(4);

    expect((await sweepExpired(t.ctx.readStore, t.ctx.eventStore, now, 2)).userTokens).toBe(2);
    expect((await sweepExpired(t.ctx.readStore, t.ctx.eventStore, now, 2)).userTokens).toBe(1);
    expect((await sweepExpired(t.ctx.readStore, t.ctx.eventStore, now, 2)).userTokens).toBe(0);
    expect(await t.ctx.readStore.count(USER_TOKENS, { user_id: user.id })).toBe(1);
    const minted = (await t.ctx.eventStore.readStream(userTokensStream(user.id))).filter((e) => e.type === 'user.token_minted');
    expect(minted).toHaveLength(4);
  });
});
