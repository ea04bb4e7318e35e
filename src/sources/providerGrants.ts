import type { ProviderGrants } from '../../commands/connections/providerGrants.js';
import { connectorOf } from './registry.js';
import { authorizeUrl, exchangeCode, ProviderCallError, revokeGrant } from './shared/oauthClient.js';
import type { ProviderDescriptor } from './shared/providerDescriptor.js';

function descriptorOf(slug: string): ProviderDescriptor {
  const connector = connectorOf(slug);
  if (!connector) throw new Error(`no connector for provider ${slug}`);
  return connector.descriptor;
}

/**
 * The consent commands' port to the providers (commands/connections/providerGrants.ts), over the
 * OAuth client (shared/oauthClient.ts) and each connector's user id reader.
 */
export const providerGrants: ProviderGrants = {
  authorizeUrl: (slug, client, r) => authorizeUrl(descriptorOf(slug), client, r),
  async exchangeCode(slug, client, r, now) {
    const connector = connectorOf(slug);
    try {
      const tokens = await exchangeCode(descriptorOf(slug), client, r, now);
      // Providers that name the user only through a call (Garmin, Oura, WHOOP): pushes and webhooks are routed by this id.
      const providerUserId = connector?.readUserId ? await connector.readUserId({ baseUrl: client.baseUrl, accessToken: tokens.accessToken }) : null;
      return providerUserId ? { ...tokens, providerUserId } : tokens;
    } catch (err) {
      if (err instanceof ProviderCallError) return { refused: err.message };
      throw err;
    }
  },
  async revoke(slug, client, grant) {
    // Deregistration needs the grant still valid: it goes first.
    await connectorOf(slug)?.deregister?.({ baseUrl: client.baseUrl, accessToken: grant.accessToken, providerUserId: grant.providerUserId });
    return revokeGrant(descriptorOf(slug), client, grant.accessToken);
  },
};
