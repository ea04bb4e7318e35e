import { GOOGLE } from '../../../catalog/providers.js';
import { describeProvider } from '../../shared/providerDescriptor.js';

/**
 * Google Health API v4: Google's OAuth 2.0 (consent on accounts.google.com, tokens and revocation
 * on oauth2.googleapis.com) and the data API on health.googleapis.com. `GOOGLE_BASE_URL` replaces
 * all three origins. `access_type=offline` asks for a refresh token; `prompt=consent` makes Google
 * issue one on a reconnect too (it issues one only with a consent screen).
 */
export const GOOGLE_HEALTH_ORIGIN = 'https://health.googleapis.com';

export const google = describeProvider(GOOGLE, {
  authorize: { origin: 'https://accounts.google.com', path: '/o/oauth2/v2/auth' },
  token: { origin: 'https://oauth2.googleapis.com', path: '/token' },
  revoke: { origin: 'https://oauth2.googleapis.com', path: '/revoke', method: 'POST' },
  scopeSeparator: ' ',
  clientAuth: 'body',
  authorizeParams: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
});
