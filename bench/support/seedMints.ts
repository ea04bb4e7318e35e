import { randomBytes, randomUUID } from 'node:crypto';
import { decideMintUserToken } from '../../commands/users/mintUserToken.js';
import { userTokensStream } from '../../commands/users/userTokens.js';
import { userStream } from '../../commands/users/user.js';
import type { EventStore } from '../../src/eventstore/eventStore.js';

/**
 * Appends `count` token mints for one active user, exactly the events the mint command decides, to
 * the stream the mint command writes them to (the user's token stream; before issue 26 point 3 the
 * user's own stream), 1000 per append (the benchmark's set-up, not a path of the service).
 * `legacy`: on the user's own stream, where mints made before the token stream existed still are.
 */
export async function seedMints(store: EventStore, o: { tenantId: string; userId: string; count: number; legacy?: boolean }): Promise<void> {
  const active = { status: 'active' as const, tenantId: o.tenantId, externalRef: null, deletionJobId: null };
  const at = new Date().toISOString();
  for (let done = 0; done < o.count; ) {
    const n = Math.min(1000, o.count - done);
    const events = Array.from({ length: n }, () =>
      decideMintUserToken(
        { tenantId: o.tenantId, userId: o.userId, tokenId: randomUUID(), tokenHash: randomBytes(32).toString('hex'), scopes: ['upload'], ttlSeconds: 0, at, by: 'bench' },
        active,
      ),
    );
    await store.appendToStream(o.legacy ? userStream(o.userId) : userTokensStream(o.userId), events, { expectedRevision: 'any' });
    done += n;
  }
}
