import type { ProviderSettings } from '../../src/catalog/providerFacts.js';
import { CONNECTED_PROVIDERS } from '../../src/catalog/providers.js';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { openValue, type ValueSealer } from '../../src/crypto/sealedValue.js';
import { resolveProviderClient } from '../../queries/connections/providerKeys.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { CONNECTIONS, CONSENT_EVENTS, CONSENT_STATES, connectionDocId, type ConnectionDoc } from '../../projections/connections/connectionsProjection.js';
import { tombstone, type ErasureHook } from '../deletions/erasureSteps.js';
import { handleCommand, loadState } from '../shared/commandHandler.js';
import { snapshotStream } from '../shared/streamSnapshots.js';
import { eraseConnectSessions } from './connectSession.js';
import type { ConnectionCredentials } from './connectionCredentials.js';
import { connectionOwner, connectionState, connectionStream, holdsGrant, TOKEN_PURPOSE, type ConnectionErased } from './connection.js';
import type { ProviderGrants, TokenSet } from './providerGrants.js';

/**
 * What erasure does to connections (spec "Credentials and users" and "Provider erasure"): a
 * user still holding a grant cannot have the provider erased (409); a provider erasure removes
 * the disconnected connection and unused consent states, keeping the consent history (kept while
 * the user exists); a user's deletion revokes the grants at the providers (best effort, spec
 * "User": deleting → removed) and erases the connection streams, history included.
 */
export function connectionErasureHook(deps: { eventStore: EventStore; readStore: ReadStore; credentials: ConnectionCredentials; sealer: ValueSealer; grants: ProviderGrants; providers: Record<string, ProviderSettings> }): ErasureHook {
  const { eventStore, readStore } = deps;
  return {
    name: 'connections',
    isConnected: async (tenantId, userId, provider) => {
      const doc = await readStore.get<ConnectionDoc>(CONNECTIONS, connectionDocId(userId, provider));
      return !!doc && doc.tenant_id === tenantId && holdsGrant(doc.status);
    },
    eraseProvider: async (job) => {
      await handleCommand(eventStore, connectionStream(job.userId, job.provider), connectionState, (state): ConnectionErased[] =>
        state.status === 'none' && Object.keys(state.pending).length === 0
          ? []
          : [{ type: 'connection.erased', data: { tenant_id: job.tenantId, user_id: job.userId, provider: job.provider, job_id: null, at: new Date().toISOString() } }],
      );
    },
    eraseUser: async (job) => {
      for (const p of CONNECTED_PROVIDERS) {
        const stream = connectionStream(job.userId, p.slug);
        const { state, revision } = await loadState(eventStore, stream, connectionState);
        const current = holdsGrant(state.status) ? await deps.credentials.current(job.userId, p.slug, state) : null;
        if (current) {
          try {
            const client = await resolveProviderClient(readStore, deps.sealer, deps.providers, job.tenantId, p.slug);
            const tokens = JSON.parse(openValue(deps.sealer, TOKEN_PURPOSE, connectionOwner(job.userId, p.slug), current.tokensSealed)) as TokenSet;
            if (client) await deps.grants.revoke(p.slug, client, { accessToken: tokens.accessToken, providerUserId: tokens.providerUserId ?? null });
          } catch {
            // Best effort: a grant that cannot be revoked expires at the provider.
          }
        }
        await tombstone(eventStore, stream);
        // A snapshot only of a stream that has events (a tombstone is a durable write: none for the providers never connected).
        if (revision !== null) await tombstone(eventStore, snapshotStream(stream));
      }
      await eraseConnectSessions(eventStore, job.userId, (stream) => tombstone(eventStore, stream));
      // Already unreadable (sealed under the profile key the deletion destroys); removed all the same.
      await deps.credentials.removeUser(job.userId);
      await readStore.applyChanges([
        { op: 'deleteMany', collection: CONNECTIONS, filter: { user_id: job.userId } },
        { op: 'deleteMany', collection: CONSENT_STATES, filter: { user_id: job.userId } },
        { op: 'deleteMany', collection: CONSENT_EVENTS, filter: { user_id: job.userId } },
      ]);
    },
  };
}
