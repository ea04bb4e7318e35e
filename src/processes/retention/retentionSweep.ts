import { CONNECT_SESSIONS, type ConnectSessionDoc } from '../../../projections/connections/connectSessionsProjection.js';
import { CONSENT_STATES } from '../../../projections/connections/connectionsProjection.js';
import { tombstone } from '../../../commands/deletions/erasureSteps.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import type { ReadStore } from '../../readstore/readStore.js';

/**
 * Retention of what only lives a short while (issue 26): pending consent states (10 minutes) and
 * connect sessions (an hour by default, a day at most) are refused once expired by the commands
 * that read them; this sweep then removes what is left of them a day later, so a late callback
 * or link still hears "expired" rather than "unknown" meanwhile:
 * - a consent state's row (`consent_states`); its request stays on the connection stream as the
 *   audit of who asked, and the connection's fold forgets it at the next request;
 * - a connect session's stream (tombstoned: it held the tenant's redirect) and its row;
 * - an expired user token's row (`user_tokens`): authentication refuses it from its expiry on, and
 *   its mint and revocation stay audited on the token stream. MongoDB's TTL index also removes
 *   these rows by itself; the embedded store has no TTL, so without this sweep they would stay.
 * Each pass removes at most `limit` of each, oldest first, from an index on `expires_at`: a
 * backlog is worked off over several passes, never in one unbounded one. Sweeps running in
 * several processes at once remove the same rows twice, which changes nothing.
 */
export const RETENTION_GRACE_MS = 24 * 3600_000;
export const RETENTION_SWEEP_LIMIT = 500;
export const RETENTION_SWEEP_EVERY_MS = 10 * 60_000;

export type RetentionSwept = { consentStates: number; connectSessions: number; userTokens: number };

const USER_TOKENS = 'user_tokens';

export async function sweepExpired(readStore: ReadStore, eventStore: EventStore, now = Date.now(), limit = RETENTION_SWEEP_LIMIT): Promise<RetentionSwept> {
  const cutoff = new Date(now - RETENTION_GRACE_MS).toISOString();
  const expired = { filter: { expires_at: { $lte: cutoff } }, sort: [['expires_at', 1]] as const, limit, fields: ['expires_at'] };

  const states = await readStore.find(CONSENT_STATES, expired);
  if (states.length > 0) await readStore.applyChanges([{ op: 'deleteMany', collection: CONSENT_STATES, filter: { _id: { $in: states.map((s) => s._id) }, expires_at: { $lte: cutoff } } }]);

  const sessions = await readStore.find<ConnectSessionDoc>(CONNECT_SESSIONS, expired);
  // Stream first: a crash between leaves the row, and the next pass tombstones again (a no-op) and drops it.
  for (const s of sessions) await tombstone(eventStore, s._id);
  if (sessions.length > 0) await readStore.applyChanges([{ op: 'deleteMany', collection: CONNECT_SESSIONS, filter: { _id: { $in: sessions.map((s) => s._id) } } }]);

  const tokens = await readStore.find(USER_TOKENS, expired);
  if (tokens.length > 0) await readStore.applyChanges([{ op: 'deleteMany', collection: USER_TOKENS, filter: { _id: { $in: tokens.map((s) => s._id) }, expires_at: { $lte: cutoff } } }]);
  return { consentStates: states.length, connectSessions: sessions.length, userTokens: tokens.length };
}
