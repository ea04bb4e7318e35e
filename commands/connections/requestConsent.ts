import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import type { ProviderFacts } from '../../src/catalog/providerFacts.js';
import { connectedProvider } from '../../src/catalog/providers.js';
import { sealValue, type ValueSealer } from '../../src/crypto/sealedValue.js';
import { sha256Hex } from '../../src/shared/secrets.js';
import { loadProviderDataHead } from '../deletions/providerData.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand, loadState } from '../shared/commandHandler.js';
import { isVisibleTo, userState, userStream } from '../users/user.js';
import { CONSENT_STATE_TTL_MS, connectionOwner, connectionState, connectionStream, VERIFIER_PURPOSE, type ConsentRequested } from './connection.js';
import type { OAuthClient, ProviderGrants } from './providerGrants.js';

export const RequestConsentInput = z.object({
  tenantId: z.string().uuid(),
  userId: z.string().uuid(),
  provider: z.string().min(1),
  /** Where the user is sent after the callback; null: the built-in result page. */
  redirectUri: z.string().url().nullable(),
  /** The instance's callback registered at the provider (PUBLIC_BASE_URL + /oauth/{provider}/callback). */
  callbackUrl: z.string().url(),
  at: z.string().datetime(),
  by: z.string().min(1),
  /** Binds the state to a browser from the start (the hosted page); absent: the first browser to open authorize_url (bindConsent). */
  browserHash: z.string().length(64).nullish(),
});
export type RequestConsent = z.infer<typeof RequestConsentInput>;

/** The consent state is a random secret the user's browser carries; only its hash is stored. */
export const stateHash = (state: string) => sha256Hex(`consent-state:${state}`);

/** The provider's authorisation page for a state (contracts §7), with the PKCE challenge of its verifier where the provider has PKCE. */
export function providerAuthorizeUrl(provider: ProviderFacts, grants: ProviderGrants, client: OAuthClient, r: { callbackUrl: string; state: string; verifier: string | null }): string {
  const challenge = r.verifier ? createHash('sha256').update(r.verifier).digest('base64url') : null;
  return grants.authorizeUrl(provider.slug, client, { redirectUri: r.callbackUrl, state: r.state, codeChallenge: challenge });
}

/** Why a retired provider cannot be connected, naming the provider that serves its users now (contracts §14). */
export function retiredDetail(provider: ProviderFacts): string {
  const r = provider.retirement;
  const since = `${provider.name} is retired: its API answers 410 Gone since ${r?.since}`;
  return r?.successor ? `${since}; connect ${r.successor} (${connectedProvider(r.successor)?.name ?? r.successor}) instead` : since;
}

/**
 * POST /v1/users/{id}/connections/{provider}: starts the authorisation code grant (contracts §7),
 * with PKCE (S256) where the provider supports it. 404 for an unknown or another tenant's user,
 * 409 while an erasure of that provider's data runs (spec "Provider erasure") and for a retired
 * provider (contracts §14, the detail names its successor). Answers the state
 * and the provider's page; the route decides whether the browser goes there directly (already
 * bound) or through the service's start address, which binds it first.
 */
export async function requestConsent(
  eventStore: EventStore,
  sealer: ValueSealer,
  grants: ProviderGrants,
  client: OAuthClient,
  input: RequestConsent,
): Promise<{ state: string; providerUrl: string; position: number }> {
  const cmd = RequestConsentInput.parse(input);
  const provider = connectedProvider(cmd.provider);
  if (!provider) throw new DomainError('not_found', `unknown provider ${cmd.provider}`);
  if (provider.retirement) throw new DomainError('conflict', retiredDetail(provider));
  const user = (await loadState(eventStore, userStream(cmd.userId), userState)).state;
  if (!isVisibleTo(user, cmd.tenantId) || user.status !== 'active') throw new DomainError('not_found', 'user not found');
  const head = await loadProviderDataHead(eventStore, cmd.userId, cmd.provider);
  if (head.erasingJob) throw new DomainError('conflict', `an erasure of ${cmd.provider} data of this user is running (job ${head.erasingJob}); connect once it is done`);

  const state = randomBytes(32).toString('base64url');
  const verifier = provider.oauth.pkce ? randomBytes(48).toString('base64url') : null;
  const hash = stateHash(state);
  const event: ConsentRequested = {
    type: 'connection.consent_requested',
    data: {
      tenant_id: cmd.tenantId,
      user_id: cmd.userId,
      provider: cmd.provider,
      state_hash: hash,
      redirect_uri: cmd.redirectUri,
      verifier_sealed: verifier ? sealValue(sealer, VERIFIER_PURPOSE, connectionOwner(cmd.userId, cmd.provider), verifier) : null,
      expires_at: new Date(Date.parse(cmd.at) + CONSENT_STATE_TTL_MS).toISOString(),
      at: cmd.at,
      by: cmd.by,
      ...(cmd.browserHash ? { browser_hash: cmd.browserHash } : {}),
    },
  };
  const result = await handleCommand(eventStore, connectionStream(cmd.userId, cmd.provider), connectionState, () => event);
  return { state, providerUrl: providerAuthorizeUrl(provider, grants, client, { callbackUrl: cmd.callbackUrl, state, verifier }), position: result.position };
}
