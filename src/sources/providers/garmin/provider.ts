import { GARMIN } from '../../../catalog/providers.js';
import { describeProvider } from '../../shared/providerDescriptor.js';

/**
 * Garmin Health API: the user consents through Garmin's OAuth 2.0 PKCE flow, then Garmin pushes
 * notifications to the instance's inbound address.
 */
export const garmin = describeProvider(GARMIN, {
  authorize: { origin: 'https://connect.garmin.com', path: '/oauth2Confirm' },
  token: { origin: 'https://diauth.garmin.com', path: '/di-oauth2-service/oauth/token' },
  revoke: { origin: 'https://apis.garmin.com', path: '/wellness-api/rest/user/registration', method: 'DELETE' },
  scopeSeparator: ' ',
  clientAuth: 'body',
});
