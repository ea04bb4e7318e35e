import { CLIENT_KEYS, clientKeysReason, type ProviderDescriptor } from '../../shared/providerDescriptor.js';

/** Oura API v2: authorisation on cloud.ouraring.com, tokens and data on api.ouraring.com. */
export const oura: ProviderDescriptor = {
  slug: 'oura',
  name: 'Oura',
  kind: 'oauth',
  dataTypes: ['daily_activity', 'daily_sleep', 'sleep', 'daily_readiness', 'heartrate', 'workout', 'daily_spo2', 'personal_info'],
  keys: CLIENT_KEYS,
  validateKeys: (k) => clientKeysReason(k),
  oauth: {
    authorize: { origin: 'https://cloud.ouraring.com', path: '/oauth/authorize' },
    token: { origin: 'https://api.ouraring.com', path: '/oauth/token' },
    revoke: { origin: 'https://api.ouraring.com', path: '/oauth/revoke', method: 'POST' },
    pkce: false,
    scopeSeparator: ' ',
    scopes: { personal: ['profile'], daily: ['activity', 'sleep'], heartrate: ['heart'], workout: ['workouts'], spo2: ['heart'] },
    clientAuth: 'body',
  },
};
