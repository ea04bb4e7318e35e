import { FITBIT_DATA_TYPES } from './dataTypes.js';
import { CLIENT_KEYS, clientKeysReason, type ProviderDescriptor } from '../../shared/providerDescriptor.js';

/** Fitbit Web API: consent on www.fitbit.com, tokens, revocation and data on api.fitbit.com; PKCE supported. */
export const fitbit: ProviderDescriptor = {
  slug: 'fitbit',
  name: 'Fitbit',
  kind: 'oauth',
  dataTypes: FITBIT_DATA_TYPES,
  keys: [...CLIENT_KEYS, { name: 'SUBSCRIBER_VERIFICATION_CODE', required: false, secret: true }],
  validateKeys: (k) =>
    clientKeysReason(
      k,
      /^[0-9A-Z]{6}$/.test(k.CLIENT_ID ?? '') ? null : 'Fitbit client ids are 6 upper-case letters or digits',
    ),
  oauth: {
    authorize: { origin: 'https://www.fitbit.com', path: '/oauth2/authorize' },
    token: { origin: 'https://api.fitbit.com', path: '/oauth2/token' },
    revoke: { origin: 'https://api.fitbit.com', path: '/oauth2/revoke', method: 'POST' },
    pkce: true,
    scopeSeparator: ' ',
    scopes: {
      activity: ['activity', 'workouts'],
      heartrate: ['heart'],
      sleep: ['sleep'],
      weight: ['body'],
      nutrition: ['nutrition'],
      oxygen_saturation: ['heart'],
      respiratory_rate: ['heart'],
      profile: ['profile'],
    },
    clientAuth: 'basic',
  },
};
