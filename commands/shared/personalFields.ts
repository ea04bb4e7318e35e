import type { Event } from '../../src/eventstore/eventStore.js';
import type { PersonalFieldPlan } from '../../src/crypto/personalSealing.js';
import type {
  ConnectionEstablished,
  ConnectionSnapshot,
  ConnectionNeedsReauth,
  ConsentChanged,
  ConsentFailed,
  ConsentRequested,
  TokensRefreshed,
  TokensResealed,
} from '../connections/connection.js';
import type { ConnectSessionCreated } from '../connections/connectSession.js';
import type { DeletionRequested } from '../deletions/deletionJob.js';
import type { DataErased, UserDeleted } from '../deletions/erasureEvents.js';
import type { TagCreated } from '../tags/tag.js';
import type { ExternalRefClaimed } from '../users/externalRef.js';
import type { UserDeletionRequested, UserRegistered, UserSnapshot } from '../users/user.js';

const fields = <E extends Event>(type: E['type'], names: readonly (keyof E['data'] & string)[]) => [type, names] as const;

/**
 * What of a user is personal beyond the health records, event type by event type: appended
 * sealed under the user's profile key and destroyed with it (src/crypto/personalSealing.ts,
 * docs/erasure.md). Readers get the fields back in the clear while the user exists.
 *
 * - the tenant's reference of the user, wherever an event repeats it (its registration, the
 *   uniqueness claim, the deletion request, the job's announcements);
 * - time-tag labels and notes;
 * - consent evidence, and what connections learn of the provider account: the provider's id of
 *   the user, the OAuth tokens (already sealed under SEALING_KEY; the token answers of several
 *   providers name the account), the redirect the tenant asked for, and provider error texts.
 */
export const PERSONAL_FIELDS: PersonalFieldPlan = Object.fromEntries([
  fields<UserRegistered>('user.registered', ['external_ref']),
  fields<ExternalRefClaimed>('external_ref.claimed', ['external_ref']),
  fields<UserDeletionRequested>('user.deletion_requested', ['external_ref']),
  fields<UserSnapshot>('snapshot.user', ['external_ref']),
  fields<DeletionRequested>('deletion.requested', ['external_ref']),
  fields<UserDeleted>('user.deleted', ['external_ref']),
  fields<DataErased>('data.erased', ['external_ref']),
  fields<TagCreated>('tag.created', ['label', 'note']),
  fields<ConsentChanged>('consent.granted', ['evidence']),
  fields<ConsentChanged>('consent.revoked', ['evidence']),
  fields<ConsentRequested>('connection.consent_requested', ['redirect_uri']),
  fields<ConsentFailed>('connection.consent_failed', ['error']),
  fields<ConnectionEstablished>('connection.established', ['provider_user_id', 'tokens_sealed']),
  fields<TokensRefreshed>('connection.tokens_refreshed', ['tokens_sealed']),
  fields<ConnectionSnapshot>('snapshot.connection', ['tokens_sealed', 'pending']),
  fields<TokensResealed>('connection.tokens_resealed', ['tokens_sealed']),
  fields<ConnectionNeedsReauth>('connection.needs_reauth', ['error']),
  fields<ConnectSessionCreated>('connect_session.created', ['redirect_uri']),
]);
