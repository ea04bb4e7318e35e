import type { ConnectSessionCreated } from '../../commands/connections/connectSession.js';
import type { UserErased } from '../../commands/users/user.js';
import { defineProjection } from '../../src/projector/projection.js';

/**
 * The connect sessions that still have a stream (issue 26, retention): the retention sweep
 * (src/processes/retention/retentionSweep.ts) finds those expired a while ago by `expires_at`,
 * erases their streams and drops their rows. A user's deletion drops them all (their streams are
 * erased by the deletion itself).
 */
export const CONNECT_SESSIONS = 'connect_sessions';
export type ConnectSessionDoc = { _id: string; tenant_id: string; user_id: string; expires_at: string };

export const connectSessionsProjection = defineProjection<ConnectSessionCreated | UserErased>({
  name: 'connect_sessions',
  collections: [{ name: CONNECT_SESSIONS, indexes: [{ fields: [['expires_at', 1]] }, { fields: [['user_id', 1]] }] }],
  eventTypes: ['connect_session.created', 'user.erased'],
  evolve: (event) => {
    const d = event.data;
    switch (event.type) {
      case 'connect_session.created':
        return [{ op: 'put', collection: CONNECT_SESSIONS, doc: { _id: event.streamName, tenant_id: d.tenant_id, user_id: d.user_id, expires_at: event.data.expires_at } }];
      case 'user.erased':
        return [{ op: 'deleteMany', collection: CONNECT_SESSIONS, filter: { user_id: d.user_id } }];
      default:
        return [];
    }
  },
});
