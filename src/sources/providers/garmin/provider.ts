import { CLIENT_KEYS, clientKeysReason, type ProviderDescriptor } from '../../shared/providerDescriptor.js';

const ENVIRONMENTS = ['production', 'evaluation'];

/**
 * Garmin Health API: the user consents through Garmin's OAuth 2.0 PKCE flow, then Garmin pushes
 * notifications to the instance's inbound address. ENVIRONMENT names the Garmin Connect developer
 * environment the keys belong to (evaluation keys cannot reach production users).
 */
export const garmin: ProviderDescriptor = {
  slug: 'garmin',
  name: 'Garmin',
  kind: 'push',
  dataTypes: ['dailies', 'epochs', 'sleeps', 'activities', 'activityDetails', 'bodyComps', 'hrv', 'stressDetails', 'pulseox', 'respiration', 'userMetrics'],
  // INBOUND_SECRET: the last path segment of the inbound address the tenant registers in its Garmin
  // application's endpoint configuration (Garmin does not sign pushes; docs/connectors/garmin.md).
  keys: [...CLIENT_KEYS, { name: 'ENVIRONMENT', required: false, secret: false }, { name: 'INBOUND_SECRET', required: false, secret: true }],
  validateKeys: (k) =>
    clientKeysReason(
      k,
      k.ENVIRONMENT === undefined || ENVIRONMENTS.includes(k.ENVIRONMENT) ? null : `ENVIRONMENT must be one of ${ENVIRONMENTS.join(', ')}`,
      k.INBOUND_SECRET === undefined || /^[A-Za-z0-9._~-]{24,256}$/.test(k.INBOUND_SECRET) ? null : 'INBOUND_SECRET must be 24 to 256 letters, digits or . _ ~ -',
    ),
  oauth: {
    authorize: { origin: 'https://connect.garmin.com', path: '/oauth2Confirm' },
    token: { origin: 'https://diauth.garmin.com', path: '/di-oauth2-service/oauth/token' },
    revoke: { origin: 'https://apis.garmin.com', path: '/wellness-api/rest/user/registration', method: 'DELETE' },
    pkce: true,
    scopeSeparator: ' ',
    scopes: { HEALTH_EXPORT: ['activity', 'heart', 'sleep', 'body'], ACTIVITY_EXPORT: ['workouts'] },
    clientAuth: 'body',
  },
};
