/**
 * What the consent commands ask of a provider's OAuth 2.0 endpoints. The domain names the port;
 * the adapter that calls the providers is src/sources/providerGrants.ts, handed in by the caller.
 */

/** The client a connection uses: the tenant's keys or the instance's, and where the provider answers. */
export type OAuthClient = { clientId: string; clientSecret: string; baseUrl: string | undefined };

export type TokenSet = {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: string | null;
  scope: string | null;
  /** The provider's id of the user when its token answer names one (Withings userid, Polar x_user_id, Fitbit user_id, Strava athlete.id) or a call after the exchange read it. */
  providerUserId?: string;
};

export interface ProviderGrants {
  /** The provider's authorisation page for a consent state (contracts §7), with the PKCE challenge when given. */
  authorizeUrl(provider: string, client: OAuthClient, r: { redirectUri: string; state: string; codeChallenge: string | null }): string;
  /**
   * The code exchanged for tokens, with the provider's id of the user where it must be asked for
   * after the exchange. `refused` carries the provider's refusal in words the user may read.
   */
  exchangeCode(provider: string, client: OAuthClient, r: { code: string; redirectUri: string; verifier: string | null }, now: Date): Promise<TokenSet | { refused: string }>;
  /**
   * Best effort: ends the grant at the provider: the user's deregistration where the provider has
   * one (Polar), then the token's revocation. False when the provider has no revocation or did not
   * confirm it.
   */
  revoke(provider: string, client: OAuthClient, grant: { accessToken: string; providerUserId: string | null }): Promise<boolean>;
}
