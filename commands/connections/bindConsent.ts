import type { EventStore } from '../../src/eventstore/eventStore.js';
import { sha256Hex } from '../../src/shared/secrets.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand } from '../shared/commandHandler.js';
import { connectionState, connectionStream, type ConnectionState, type ConsentBound, type PendingConsent } from './connection.js';

/** What is stored of a browser's consent cookie: its hash, never the value the browser holds. */
export const browserHash = (cookieValue: string) => sha256Hex(`consent-browser:${cookieValue}`);

export type BindConsent = {
  tenantId: string;
  userId: string;
  provider: string;
  stateHash: string;
  /** The hash of the cookie the browser brought for this state, if any. */
  presentedHash: string | null;
  /** The hash of a fresh random value: the binding when the state is not bound yet. */
  freshHash: string;
  at: string;
};

/**
 * Who owns a consent state (RFC 6749 §10.12): the first browser that opens authorize_url. An
 * unbound state is bound to a fresh value (never to one the browser brought: a cookie planted by
 * a neighbouring site must not become the binding); a bound one is only reopened by the browser
 * holding its cookie. Unknown, used or expired states are `not_found`, another browser `conflict`.
 */
export function decideBinding(state: ConnectionState, cmd: BindConsent): ConsentBound[] {
  const pending = state.pending[cmd.stateHash];
  if (!pending || state.tenantId !== cmd.tenantId) throw new DomainError('not_found', 'unknown or already used consent state');
  if (Date.parse(pending.expiresAt) <= Date.parse(cmd.at)) throw new DomainError('not_found', 'the consent state expired (10 minutes)');
  if (pending.browserHash === null) {
    return [{ type: 'connection.consent_bound', data: { tenant_id: cmd.tenantId, user_id: cmd.userId, provider: cmd.provider, state_hash: cmd.stateHash, browser_hash: cmd.freshHash, at: cmd.at } }];
  }
  if (pending.browserHash === cmd.presentedHash) return [];
  throw new DomainError('conflict', 'this consent link was already opened in another browser');
}

/**
 * GET /oauth/{provider}/authorize: binds the state to this browser. Answers the pending consent
 * and whether the fresh value became its binding (then the browser must be given that cookie).
 * Two browsers opening the link at once: the appends race on the stream's revision and the loser
 * re-decides on a bound state, so exactly one owns it.
 */
export async function bindConsent(eventStore: EventStore, cmd: BindConsent): Promise<{ pending: PendingConsent; fresh: boolean; position: number }> {
  const result = await handleCommand(eventStore, connectionStream(cmd.userId, cmd.provider), connectionState, (state) => decideBinding(state, cmd));
  const pending = result.state.pending[cmd.stateHash]!;
  return { pending, fresh: pending.browserHash === cmd.freshHash, position: result.position };
}
