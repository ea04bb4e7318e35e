import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { snapshotStream } from '../../../commands/shared/streamSnapshots.js';
import { decideMintUserToken } from '../../../commands/users/mintUserToken.js';
import { userState, userStream } from '../../../commands/users/user.js';
import type { EventStore, ReadStreamOptions } from '../../../src/eventstore/eventStore.js';
import { startTestApp, type TestApp } from '../../support/server.js';

/**
 * Issue 26 point 3: a user whose tokens were minted on the user stream before the token stream
 * existed is read from a snapshot, not folded whole on every upload, ETL batch and pull. The
 * snapshot is taken by the reader that folded 1,000 events past the last one; what follows it is
 * still folded; an erased stream folds to nothing whatever its snapshot says.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** The store, counting the events its stream reads hand back. */
function counting(store: EventStore): { store: EventStore; read: () => number } {
  let read = 0;
  const wrapped = Object.create(store) as EventStore;
  wrapped.readStream = async (name: string, options?: ReadStreamOptions) => {
    const events = await store.readStream(name, options);
    read += events.length;
    return events;
  };
  return { store: wrapped, read: () => read };
}

async function legacyMints(tenantId: string, userId: string, count: number): Promise<void> {
  const active = { status: 'active' as const, tenantId, externalRef: null, deletionJobId: null };
  const at = new Date().toISOString();
  for (let done = 0; done < count; done += 500) {
    const events = Array.from({ length: 500 }, () =>
      decideMintUserToken({ tenantId, userId, tokenId: randomUUID(), tokenHash: randomBytes(32).toString('hex'), scopes: ['upload'], ttlSeconds: 0, at, by: 'test' }, active),
    );
    await t.ctx.eventStore.appendToStream(userStream(userId), events, { expectedRevision: 'any' });
  }
}

describe('user snapshots (issue 26: grown user streams are read from a head)', () => {
  it('folds a user stream with 2,500 old token mints once, then reads the snapshot and the events after it; the state is the full fold', async () => {
    const tenant = await t.createTenant('snapshots');
    const user = await t.createUser(tenant.apiKey, { external_ref: 'snap-1' });
    await legacyMints(tenant.id, user.id, 2500);
    const full = await loadState(t.ctx.eventStore, userStream(user.id), { ...userState, snapshots: undefined });
    const first = counting(t.ctx.eventStore);
    expect(await loadState(first.store, userStream(user.id), userState)).toEqual(full);
    expect(first.read()).toBe(2501);
    expect(await t.ctx.eventStore.readStream(snapshotStream(userStream(user.id)))).toHaveLength(1);

    const second = counting(t.ctx.eventStore);
    const again = await loadState(second.store, userStream(user.id), userState);
    expect(again).toEqual(full);
    expect(again.state).toMatchObject({ status: 'active', externalRef: 'snap-1' });
    // The snapshot and the event it was taken at.
    expect(second.read()).toBe(2);

    // What happens after the snapshot is folded on top of it, and the revision is the stream's.
    const del = await t.call('DELETE', `/v1/users/${user.id}`, { key: tenant.apiKey });
    expect(del.statusCode).toBeLessThan(300);
    const after = await loadState(t.ctx.eventStore, userStream(user.id), userState);
    expect(after).toEqual(await loadState(t.ctx.eventStore, userStream(user.id), { ...userState, snapshots: undefined }));
    expect(after.state.status).not.toBe('active');
  });

  it('an erased (tombstoned) user stream folds to the initial state, whatever its snapshot says', async () => {
    const tenant = await t.createTenant('snapshots-erased');
    const user = await t.createUser(tenant.apiKey);
    await legacyMints(tenant.id, user.id, 1000);
    await loadState(t.ctx.eventStore, userStream(user.id), userState);
    expect(await t.ctx.eventStore.readStream(snapshotStream(userStream(user.id)))).toHaveLength(1);
    await t.ctx.eventStore.deleteStream(userStream(user.id), { hard: true });
    expect(await loadState(t.ctx.eventStore, userStream(user.id), userState)).toEqual({ state: userState.initialState(), revision: null });
  });
});
