import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { mintUserToken } from '../../../commands/users/mintUserToken.js';
import { requestUserDeletion } from '../../../commands/users/requestUserDeletion.js';
import { userStream } from '../../../commands/users/user.js';
import { userTokensStream } from '../../../commands/users/userTokens.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';

const stores: SqliteEventStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

async function activeUser() {
  const store = new SqliteEventStore({ path: ':memory:' });
  stores.push(store);
  const tenantId = randomUUID();
  const userId = randomUUID();
  await store.appendToStream(userStream(userId), [{ type: 'user.registered', data: { user_id: userId, tenant_id: tenantId, external_ref: null, created_at: new Date().toISOString() } }], { expectedRevision: 'no_stream' });
  return { store, tenantId, userId };
}

const mintInput = (tenantId: string, userId: string) => ({
  tenantId,
  userId,
  tokenId: randomUUID(),
  tokenHash: 'a'.repeat(64),
  scopes: ['upload' as const],
  ttlSeconds: 0,
  at: new Date().toISOString(),
  by: 'test',
});

describe('mintUserToken on the user token stream (issue 26 point 3)', () => {
  it("appends the mint to usertokens-<user>, leaving the user's stream as it was", async () => {
    const { store, tenantId, userId } = await activeUser();
    await mintUserToken(store, mintInput(tenantId, userId));
    await mintUserToken(store, mintInput(tenantId, userId));
    expect((await store.readStream(userStream(userId))).map((e) => e.type)).toEqual(['user.registered']);
    expect((await store.readStream(userTokensStream(userId))).map((e) => e.streamRevision)).toEqual([0, 1]);
  });

  it('refuses a mint that raced a deletion request: the revocation moved the token stream, and the retry finds the user deleting', async () => {
    const { store, tenantId, userId } = await activeUser();
    await mintUserToken(store, mintInput(tenantId, userId));
    // The deletion lands after the mint read the user as active, before its append.
    const append = store.appendToStream.bind(store);
    let raced = false;
    store.appendToStream = async (stream, events, options) => {
      if (!raced && stream === userTokensStream(userId) && events[0]?.type === 'user.token_minted') {
        raced = true;
        await requestUserDeletion(store, { tenantId, userId, jobId: randomUUID(), at: new Date().toISOString(), by: 'test' });
      }
      return append(stream, events, options);
    };
    const refused = await mintUserToken(store, mintInput(tenantId, userId)).catch((e: unknown) => e);
    expect(raced).toBe(true);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('not_found');
    expect((await store.readStream(userTokensStream(userId))).map((e) => e.type)).toEqual(['user.token_minted', 'user.tokens_revoked']);
  });
});
