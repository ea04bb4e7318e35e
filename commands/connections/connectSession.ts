import { randomBytes } from 'node:crypto';
import { StreamDeletedError, type Event, type EventStore } from '../../src/eventstore/eventStore.js';
import { sha256Hex } from '../../src/shared/secrets.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand, loadState, type StreamState } from '../shared/commandHandler.js';
import { isVisibleTo, userState, userStream } from '../users/user.js';

/**
 * A connect session (POST /v1/users/{id}/connect-sessions): a short-lived link to the hosted page
 * that lists the providers with the user's status and starts the consent flow. The link carries
 * a random secret; only its hash names the session's stream, so the page needs no credential
 * and a leaked event log opens no page.
 */
export type ConnectSessionCreated = Event<
  'connect_session.created',
  { tenant_id: string; user_id: string; redirect_uri: string | null; expires_at: string; at: string; by: string }
>;

/** Names, in the user's list of sessions, a session stream: the user's deletion erases every one (the stream name alone does not tell its user). */
export type ConnectSessionIssued = Event<'connect_session.issued', { tenant_id: string; user_id: string; session_stream: string; at: string }>;

export const CONNECT_SESSION_TTL_SECONDS = { default: 3600, max: 86_400 } as const;
export const connectSessionStream = (secret: string) => `connect-session-${sha256Hex(`connect-session:${secret}`)}`;
export const userConnectSessionsStream = (userId: string) => `connect-sessions-of-${userId}`;

type SessionState = { session: ConnectSessionCreated['data'] | null };
const sessionState: StreamState<SessionState, ConnectSessionCreated> = {
  initialState: () => ({ session: null }),
  evolve: (_state, event) => ({ session: event.data }),
};

export async function createConnectSession(
  eventStore: EventStore,
  input: { tenantId: string; userId: string; redirectUri: string | null; ttlSeconds: number; at: string; by: string },
): Promise<{ secret: string; expiresAt: string }> {
  const user = (await loadState(eventStore, userStream(input.userId), userState)).state;
  if (!isVisibleTo(user, input.tenantId) || user.status !== 'active') throw new DomainError('not_found', 'user not found');
  const secret = `cs_${randomBytes(32).toString('base64url')}`;
  const expiresAt = new Date(Date.parse(input.at) + input.ttlSeconds * 1000).toISOString();
  // Listed before it exists: a deletion that reads the list erases it, or tombstones its name first.
  const issued: ConnectSessionIssued = { type: 'connect_session.issued', data: { tenant_id: input.tenantId, user_id: input.userId, session_stream: connectSessionStream(secret), at: input.at } };
  try {
    await eventStore.appendToStream(userConnectSessionsStream(input.userId), [issued]);
  } catch (err) {
    if (err instanceof StreamDeletedError) throw new DomainError('not_found', 'user not found');
    throw err;
  }
  await handleCommand(eventStore, connectSessionStream(secret), sessionState, (): ConnectSessionCreated => ({
    type: 'connect_session.created',
    data: { tenant_id: input.tenantId, user_id: input.userId, redirect_uri: input.redirectUri, expires_at: expiresAt, at: input.at, by: input.by },
  }));
  return { secret, expiresAt };
}

/** The session a link names, while it lives and its user is active; null otherwise. */
export async function openConnectSession(eventStore: EventStore, secret: string, now: Date): Promise<ConnectSessionCreated['data'] | null> {
  if (!/^cs_[A-Za-z0-9_-]{43}$/.test(secret)) return null;
  const { session } = (await loadState(eventStore, connectSessionStream(secret), sessionState)).state;
  if (!session || Date.parse(session.expires_at) <= now.getTime()) return null;
  const user = (await loadState(eventStore, userStream(session.user_id), userState)).state;
  return isVisibleTo(user, session.tenant_id) && user.status === 'active' ? session : null;
}

/** A user's deletion: every connect session of the user is tombstoned (its link opens nothing, its events are gone), then the list. */
export async function eraseConnectSessions(eventStore: EventStore, userId: string, tombstone: (stream: string) => Promise<void>): Promise<void> {
  let listed: { data: unknown }[] = [];
  try {
    listed = await eventStore.readStream(userConnectSessionsStream(userId));
  } catch (err) {
    if (!(err instanceof StreamDeletedError)) throw err;
  }
  for (const e of listed) await tombstone((e.data as ConnectSessionIssued['data']).session_stream);
  await tombstone(userConnectSessionsStream(userId));
}
