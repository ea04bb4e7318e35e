import { ConcurrencyError, type EventStore } from '../../src/eventstore/eventStore.js';
import type { ConsentCategory, ProviderFacts } from '../../src/catalog/providerFacts.js';
import { openValue, sealValue, type ValueSealer } from '../../src/crypto/sealedValue.js';
import { loadState } from '../shared/commandHandler.js';
import {
  connectionOwner,
  connectionState,
  connectionStream,
  TOKEN_PURPOSE,
  VERIFIER_PURPOSE,
  type ConnectionEvent,
  type ConnectionState,
  type ConsentChanged,
} from './connection.js';
import type { OAuthClient, ProviderGrants, TokenSet } from './providerGrants.js';
import type { ConnectionCredentials } from './connectionCredentials.js';

export type ConsentCallback = {
  tenantId: string;
  userId: string;
  provider: ProviderFacts;
  stateHash: string;
  code: string | null;
  /** The provider's `error` parameter (the user declined, or the provider refused the request). */
  error: string | null;
  /** Scopes the provider reported on the redirect (Strava); the token answer's win when present. */
  scope: string | null;
  callbackUrl: string;
  application: string;
  at: string;
  /** The hash of the consent cookie the browser brought for this state (bindConsent), null without one. */
  browserHash: string | null;
};

/**
 * `otherBrowser`: the callback came from a browser that did not start the flow; nothing was
 * appended, so the state stays usable by the browser that did.
 */
export type ConsentOutcome = { status: 'connected' | 'error'; redirectUri: string | null; error: string | null; position: number; otherBrowser?: true };

/** The consent categories (contracts §7) a set of granted scopes covers, in a stable order. */
export function categoriesOf(provider: Pick<ProviderFacts, 'oauth'>, scopes: readonly string[]): ConsentCategory[] {
  const out = new Set<ConsentCategory>();
  for (const s of scopes) for (const c of provider.oauth.scopes[s] ?? []) out.add(c);
  return [...out].sort();
}

export const splitScopes = (scope: string) => scope.split(/[\s,]+/).filter((s) => s.length > 0);

/**
 * GET /oauth/{provider}/callback: the consent state is single use and lives 10 minutes (spec
 * "Limits"). The code is exchanged before anything is appended, and the grant is appended at the
 * revision the state was read at, so two callbacks with the same state make one connection: the
 * second finds its append refused and answers an error. Token refreshes write the credentials record,
 * not the stream, so a pull refreshing meanwhile never makes the state look used; the new grant's
 * tokens then go over the record too (connectionCredentials.ts). Reconnecting after needs_reauth makes the
 * connection usable again (spec "Connection"). Only the browser the state is bound to completes it
 * (RFC 6749 §10.12): any other callback is refused before anything is decided or appended.
 */
export async function completeConsent(
  eventStore: EventStore,
  sealer: ValueSealer,
  credentials: ConnectionCredentials,
  grants: ProviderGrants,
  client: OAuthClient,
  cb: ConsentCallback,
): Promise<ConsentOutcome> {
  const stream = connectionStream(cb.userId, cb.provider.slug);
  const { state, revision } = await loadState(eventStore, stream, connectionState);
  const pending = state.pending[cb.stateHash];
  const base = { tenant_id: cb.tenantId, user_id: cb.userId, provider: cb.provider.slug };
  if (!pending || state.tenantId !== cb.tenantId) return { status: 'error', redirectUri: null, error: 'unknown or already used consent state', position: 0 };
  if (pending.browserHash === null || pending.browserHash !== cb.browserHash) {
    return { status: 'error', redirectUri: null, error: 'this connection was started in another browser', position: 0, otherBrowser: true };
  }

  const fail = async (error: string): Promise<ConsentOutcome> => {
    const appended = await append(eventStore, stream, revision, [{ type: 'connection.consent_failed', data: { ...base, state_hash: cb.stateHash, error, at: cb.at } }]);
    return { status: 'error', redirectUri: pending.redirectUri, error, position: appended ?? 0 };
  };
  if (Date.parse(pending.expiresAt) <= Date.parse(cb.at)) return fail('the consent state expired (10 minutes)');
  if (cb.error) return fail(`the provider answered ${cb.error.slice(0, 100)}`);
  if (!cb.code) return fail('the provider sent no code');

  let exchanged: TokenSet | { refused: string };
  try {
    const verifier = pending.verifierSealed ? openValue(sealer, VERIFIER_PURPOSE, connectionOwner(cb.userId, cb.provider.slug), pending.verifierSealed) : null;
    exchanged = await grants.exchangeCode(cb.provider.slug, client, { code: cb.code, redirectUri: cb.callbackUrl, verifier }, new Date(cb.at));
  } catch {
    exchanged = { refused: 'the code could not be exchanged' };
  }
  if ('refused' in exchanged) return fail(exchanged.refused);
  const tokens = exchanged;
  const scopes = splitScopes(tokens.scope ?? cb.scope ?? Object.keys(cb.provider.oauth.scopes).join(' '));
  const categories = categoriesOf(cb.provider, scopes);
  const sealed = sealValue(sealer, TOKEN_PURPOSE, connectionOwner(cb.userId, cb.provider.slug), JSON.stringify(tokens));
  const events: ConnectionEvent[] = [
    {
      type: 'connection.established',
      data: { ...base, state_hash: cb.stateHash, scopes, categories, application: cb.application, tokens_sealed: sealed, reconnect: state.status !== 'none', at: cb.at, by: pending.by, ...providerUserIdOf(tokens) },
    },
    ...consentChanges(state, categories, { ...base, actor_id: pending.by, at: cb.at }, `authorization code grant at ${cb.provider.name}; scopes: ${scopes.join(' ') || '(none)'}`),
  ];
  const position = await append(eventStore, stream, revision, events);
  if (position === null) return { status: 'error', redirectUri: pending.redirectUri, error: 'the consent state was already used', position: 0 };
  // After the append: a crash before this write leaves readers on the grant's event tokens, which are as new.
  await credentials.replace({ tenantId: cb.tenantId, userId: cb.userId, provider: cb.provider.slug }, cb.stateHash, sealed, new Date(cb.at));
  return { status: 'connected', redirectUri: pending.redirectUri, error: null, position };
}

/** The provider's id of the user, when the token answer or a call named it (kept on the connection so pushes find it). */
function providerUserIdOf(tokens: object): { provider_user_id?: string } {
  const id = (tokens as { providerUserId?: unknown }).providerUserId;
  return typeof id === 'string' ? { provider_user_id: id } : {};
}

/**
 * One consent event per category (contracts §7): every category of the new grant is granted
 * (a reconnect renews the consent, so the auditor sees it), every category the grant no longer
 * covers is revoked.
 */
function consentChanges(
  state: ConnectionState,
  categories: readonly ConsentCategory[],
  base: { tenant_id: string; user_id: string; provider: string; actor_id: string; at: string },
  evidence: string,
): ConsentChanged[] {
  const granted: ConsentChanged[] = categories.map((category) => ({ type: 'consent.granted', data: { ...base, category, evidence } }));
  const dropped: ConsentChanged[] = state.categories
    .filter((c) => !categories.includes(c))
    .map((category) => ({ type: 'consent.revoked', data: { ...base, category, evidence: `the new grant at the provider no longer covers ${category}` } }));
  return [...granted, ...dropped];
}

/** Appends at the revision the decision read; null when another writer got there first. */
async function append(eventStore: EventStore, stream: string, revision: number | null, events: ConnectionEvent[]): Promise<number | null> {
  try {
    return (await eventStore.appendToStream(stream, events, { expectedRevision: revision ?? 'no_stream' })).lastPosition;
  } catch (err) {
    if (err instanceof ConcurrencyError) return null;
    throw err;
  }
}
