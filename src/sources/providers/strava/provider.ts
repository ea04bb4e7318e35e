import { CLIENT_KEYS, clientKeysReason, type ProviderDescriptor } from '../../shared/providerDescriptor.js';

/** Strava API v3: consent, tokens and deauthorisation on www.strava.com; client ids are numbers. */
export const strava: ProviderDescriptor = {
  slug: 'strava',
  name: 'Strava',
  kind: 'oauth',
  dataTypes: ['activities', 'streams'],
  keys: CLIENT_KEYS,
  validateKeys: (k) =>
    clientKeysReason(k, /^[0-9]{1,12}$/.test(k.CLIENT_ID ?? '') ? null : 'Strava client ids are numbers'),
  oauth: {
    authorize: { origin: 'https://www.strava.com', path: '/oauth/authorize' },
    token: { origin: 'https://www.strava.com', path: '/oauth/token' },
    revoke: { origin: 'https://www.strava.com', path: '/oauth/deauthorize', method: 'POST' },
    pkce: false,
    scopeSeparator: ',',
    scopes: { read: ['profile'], 'activity:read_all': ['activity', 'workouts'] },
    clientAuth: 'body',
  },
};
