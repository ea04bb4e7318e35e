import type { SourcePrioritiesSet } from '../../commands/users/setSourcePriorities.js';
import type { UserEvent } from '../../commands/users/user.js';
import type { UserTokensRevoked } from '../../commands/users/userTokens.js';
import { defineProjection } from '../../src/projector/projection.js';

export type UserDoc = {
  _id: string;
  id: string;
  tenant_id: string;
  external_ref: string | null;
  status: 'active' | 'deleting';
  created_at: string;
  /** The user's order of sources (contracts §6), absent until the first PUT of source-priorities. */
  source_priorities?: Record<string, string[]>;
  source_priorities_updated_at?: string;
};
/**
 * Keyed by the token's SHA-256: authentication is one indexed lookup. Mints come from the user's
 * token stream, and from the user's own stream for tokens minted before it existed; an expired
 * token's row goes by itself (`expireAt`), and authentication refuses it before that.
 */
export type UserTokenDoc = { _id: string; token_id: string; user_id: string; tenant_id: string; scopes: string[]; expires_at: string };

export const usersProjection = defineProjection<UserEvent | UserTokensRevoked | SourcePrioritiesSet>({
  name: 'users',
  collections: [
    { name: 'users', indexes: [{ fields: [['tenant_id', 1], ['created_at', 1]] }], columns: ['status'] },
    { name: 'user_tokens', indexes: [{ fields: [['user_id', 1]] }, { fields: [['expires_at', 1]] }], expireAt: 'expires_at' },
  ],
  eventTypes: ['user.registered', 'user.token_minted', 'user.tokens_revoked', 'user.deletion_requested', 'user.erased', 'source_priorities.set'],
  evolve: (event) => {
    const d = event.data;
    switch (event.type) {
      case 'user.registered':
        return [
          {
            op: 'put',
            collection: 'users',
            doc: { _id: d.user_id, id: d.user_id, tenant_id: d.tenant_id, external_ref: event.data.external_ref, status: 'active', created_at: event.data.created_at },
          },
        ];
      case 'user.token_minted':
        return [
          {
            op: 'put',
            collection: 'user_tokens',
            doc: {
              _id: event.data.token_hash,
              token_id: event.data.token_id,
              user_id: d.user_id,
              tenant_id: d.tenant_id,
              scopes: event.data.scopes,
              expires_at: event.data.expires_at,
            },
          },
        ];
      case 'user.tokens_revoked':
        return [{ op: 'deleteMany', collection: 'user_tokens', filter: { user_id: d.user_id } }];
      case 'user.deletion_requested':
        // Tokens stop at the request, not when the job ends.
        return [
          { op: 'update', collection: 'users', id: d.user_id, set: { status: 'deleting' } },
          { op: 'deleteMany', collection: 'user_tokens', filter: { user_id: d.user_id } },
        ];
      case 'user.erased':
        return [
          { op: 'delete', collection: 'users', id: d.user_id },
          { op: 'deleteMany', collection: 'user_tokens', filter: { user_id: d.user_id } },
        ];
      case 'source_priorities.set':
        // Kept on the user: every read of the user's records loads the user anyway, and the order
        // lives as long as the user (a provider's erasure leaves it).
        return [{ op: 'update', collection: 'users', id: d.user_id, set: { source_priorities: event.data.priorities, source_priorities_updated_at: event.data.at } }];
    }
  },
});
