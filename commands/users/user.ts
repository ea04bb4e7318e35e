import type { Event } from '../../src/eventstore/eventStore.js';
import type { StreamState } from '../shared/commandHandler.js';
import type { Snapshots } from '../shared/streamSnapshots.js';

export type UserRegistered = Event<'user.registered', { user_id: string; tenant_id: string; external_ref: string | null; created_at: string }>;
/** Written on the user's token stream (userTokens.ts); tokens minted before it exist on the user's own stream. */
export type UserTokenMinted = Event<
  'user.token_minted',
  { user_id: string; tenant_id: string; token_id: string; token_hash: string; scopes: string[]; expires_at: string; issued_by: string; created_at: string }
>;
export type UserDeletionRequested = Event<
  'user.deletion_requested',
  { user_id: string; tenant_id: string; job_id: string; external_ref: string | null; requested_at: string; requested_by: string }
>;
export type UserErased = Event<'user.erased', { user_id: string; tenant_id: string; job_id: string; erased_at: string }>;
export type UserEvent = UserRegistered | UserTokenMinted | UserDeletionRequested | UserErased;

export const userStream = (userId: string) => `user-${userId}`;

export type UserStatus = 'none' | 'active' | 'deleting' | 'erased';
export type UserState = { status: UserStatus; tenantId: string | null; externalRef: string | null; deletionJobId: string | null };

/**
 * A snapshot of the user (commands/shared/streamSnapshots.ts): tokens minted before the token
 * stream existed (issue 26) stay on the user's stream, which upload acceptance, every ETL batch
 * and every pull read. Its external_ref is sealed under the user's profile key (personalFields.ts).
 */
export type UserSnapshot = Event<
  'snapshot.user',
  { user_id: string; tenant_id: string; status: UserStatus; external_ref: string | null; deletion_job_id: string | null; snapshot_version: number; revision: number }
>;

const userSnapshots: Snapshots<UserState> = {
  type: 'snapshot.user',
  version: 1,
  every: 1000,
  encode: (state, streamName) =>
    state.tenantId === null
      ? null
      : { user_id: streamName.slice('user-'.length), tenant_id: state.tenantId, status: state.status, external_ref: state.externalRef, deletion_job_id: state.deletionJobId },
  decode: (d) => ({ status: d.status as UserStatus, tenantId: d.tenant_id as string, externalRef: (d.external_ref as string | null) ?? null, deletionJobId: (d.deletion_job_id as string | null) ?? null }),
};

export const userState: StreamState<UserState, UserEvent> = {
  snapshots: userSnapshots,
  initialState: () => ({ status: 'none', tenantId: null, externalRef: null, deletionJobId: null }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'user.registered':
        return { ...state, status: 'active', tenantId: event.data.tenant_id, externalRef: event.data.external_ref };
      case 'user.deletion_requested':
        return { ...state, status: 'deleting', deletionJobId: event.data.job_id };
      case 'user.erased':
        return { ...state, status: 'erased' };
      default:
        return state;
    }
  },
};

/** Another tenant's user is indistinguishable from a missing one. */
export function isVisibleTo(state: UserState, tenantId: string): boolean {
  return state.status !== 'none' && state.tenantId === tenantId;
}
