import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { userStream, type UserTokenMinted } from '../../commands/users/user.js';
import { userTokensStream } from '../../commands/users/userTokens.js';
import { StreamDeletedError } from '../../src/eventstore/eventStore.js';
import { newSecret, sha256Hex } from '../../src/shared/secrets.js';
import { addUserRoute, USER_ROUTE } from '../support/fastifyProbe.js';
import { expectStatus, expectUnauthorized, tenantApp, type TenantHandle, type TestApp } from '../support/server.js';

vi.mock('fastify', async (importOriginal) => (await import('../support/fastifyProbe.js')).probedFastify(await importOriginal()));

let t: TestApp, tenant: TenantHandle;

beforeAll(async () => {
  addUserRoute();
  ({ t, tenant } = await tenantApp('token-stream'));
});
afterAll(async () => {
  await t?.close();
});

const streamLength = async (stream: string) => (await t.ctx.eventStore.readStream(stream)).length;

/** A mint as the service wrote it before tokens had their own stream: on the user's stream. */
async function legacyToken(userId: string): Promise<string> {
  const token = newSecret('userToken');
  const at = new Date().toISOString();
  const minted: UserTokenMinted = {
    type: 'user.token_minted',
    data: { user_id: userId, tenant_id: tenant.id, token_id: randomUUID(), token_hash: sha256Hex(token), scopes: ['read', 'upload'], expires_at: new Date(Date.now() + 3_600_000).toISOString(), issued_by: 'old-key', created_at: at },
  };
  const result = await t.ctx.eventStore.appendToStream(userStream(userId), [minted], { expectedRevision: 'stream_exists' });
  await t.ctx.settle(result.lastPosition, ['users']);
  return token;
}

describe("user tokens out of the user's stream (issue 26 point 3)", () => {
  it("does not grow the user's stream when tokens are minted: the mints go to the user's token stream", async () => {
    const fresh = await t.createUser(tenant.apiKey);
    const before = await streamLength(userStream(fresh.id));
    for (let i = 0; i < 5; i++) await t.mintToken(tenant.apiKey, fresh.id, { scopes: ['upload'] });
    expect(await streamLength(userStream(fresh.id))).toBe(before);
    const tokens = await t.ctx.eventStore.readStream(userTokensStream(fresh.id));
    expect(tokens.map((e) => e.type)).toEqual(Array(5).fill('user.token_minted'));
  });

  it('keeps a token minted before the upgrade (user.token_minted on the user stream) working, and revokes it with the user', async () => {
    const old = await t.createUser(tenant.apiKey);
    const token = await legacyToken(old.id);
    const res = await t.call('GET', USER_ROUTE, { key: token });
    expectStatus(res, 200);
    expect(res.json()).toMatchObject({ principal: { kind: 'user', userId: old.id } });
    await t.deleteUser(tenant.apiKey, old.id);
    // Read-your-writes: refused on the very next request after the deletion's 202.
    expectUnauthorized(await t.call('GET', USER_ROUTE, { key: token }));
  });

  it("records the revocation on the token stream at the deletion request, refuses every token at once, and erases the token stream with the user (spec States: User; docs/erasure.md)", async () => {
    const doomed = await t.createUser(tenant.apiKey);
    const legacy = await legacyToken(doomed.id);
    const { token } = await t.mintToken(tenant.apiKey, doomed.id, { scopes: ['read'] });
    expectStatus(await t.call('GET', USER_ROUTE, { key: token }), 200);
    const jobId = await t.deleteUser(tenant.apiKey, doomed.id);
    expectUnauthorized(await t.call('GET', USER_ROUTE, { key: token }));
    expectUnauthorized(await t.call('GET', USER_ROUTE, { key: legacy }));
    const events = await t.ctx.eventStore.readStream(userTokensStream(doomed.id));
    expect(events.map((e) => e.type)).toEqual(['user.token_minted', 'user.tokens_revoked']);
    expect(events[1]!.data).toMatchObject({ user_id: doomed.id, job_id: jobId });
    await t.waitForDeletion(tenant.apiKey, jobId);
    await expect(t.ctx.eventStore.readStream(userTokensStream(doomed.id))).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(t.ctx.eventStore.readStream(userStream(doomed.id))).rejects.toBeInstanceOf(StreamDeletedError);
  });
});
