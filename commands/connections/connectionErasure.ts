import type { EventStore } from '../../src/eventstore/eventStore.js';
import { CONNECTED_PROVIDERS } from '../../src/connectors/providers.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { CONNECTIONS, CONSENT_EVENTS, CONSENT_STATES, connectionDocId, type ConnectionDoc } from '../../projections/connections/connectionsProjection.js';
import { tombstone, type ErasureHook } from '../deletions/erasureSteps.js';
import { handleCommand } from '../shared/commandHandler.js';
import { connectionState, connectionStream, holdsGrant, type ConnectionErased } from './connection.js';

/**
 * What erasure does to connections (spec "Credentials and users" and "Provider erasure"): a
 * user still holding a grant cannot have the provider erased (409); a provider erasure removes
 * the disconnected connection and unused consent states, keeping the consent history (kept while
 * the user exists); a user's deletion erases the connection streams, history included.
 */
export function connectionErasureHook(eventStore: EventStore, readStore: ReadStore): ErasureHook {
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
      for (const p of CONNECTED_PROVIDERS) await tombstone(eventStore, connectionStream(job.userId, p.slug));
      await readStore.applyChanges([
        { op: 'deleteMany', collection: CONNECTIONS, filter: { user_id: job.userId } },
        { op: 'deleteMany', collection: CONSENT_STATES, filter: { user_id: job.userId } },
        { op: 'deleteMany', collection: CONSENT_EVENTS, filter: { user_id: job.userId } },
      ]);
    },
  };
}
