import type { Event } from '../../src/eventstore/eventStore.js';
import { sha256Hex } from '../../src/shared/secrets.js';
import type { StreamState } from '../shared/commandHandler.js';

export type ExternalRefClaimed = Event<'external_ref.claimed', { tenant_id: string; external_ref: string; user_id: string; at: string }>;
export type ExternalRefReleased = Event<'external_ref.released', { tenant_id: string; user_id: string; at: string }>;
export type ExternalRefEvent = ExternalRefClaimed | ExternalRefReleased;

/**
 * Uniqueness of external_ref per tenant is enforced by the event store itself: one stream per
 * (tenant, ref), claimed with optimistic concurrency. The ref is hashed so that the stream name
 * stays short and carries no caller data.
 */
export const externalRefStream = (tenantId: string, externalRef: string) => `extref-${tenantId}-${sha256Hex(externalRef).slice(0, 40)}`;

export type ExternalRefState = { claimedBy: string | null; claimedAt: string | null };

export const externalRefState: StreamState<ExternalRefState, ExternalRefEvent> = {
  initialState: () => ({ claimedBy: null, claimedAt: null }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'external_ref.claimed':
        return { claimedBy: event.data.user_id, claimedAt: event.data.at };
      case 'external_ref.released':
        return state.claimedBy === event.data.user_id ? { claimedBy: null, claimedAt: null } : state;
      default:
        return state;
    }
  },
};
