import { CLIENT_KEYS, clientKeysReason, type ProviderDescriptor } from '../../shared/providerDescriptor.js';

/** Withings public API: consent on account.withings.com, tokens (action=requesttoken) and data on wbsapi.withings.net. */
export const withings: ProviderDescriptor = {
  slug: 'withings',
  name: 'Withings',
  kind: 'oauth',
  dataTypes: ['measure', 'activity', 'sleep', 'workouts'],
  keys: CLIENT_KEYS,
  validateKeys: (k) =>
    clientKeysReason(
      k,
      /^[0-9a-f]{64}$/.test(k.CLIENT_ID ?? '') ? null : 'Withings client ids are 64 lower-case hexadecimal characters',
    ),
  oauth: {
    authorize: { origin: 'https://account.withings.com', path: '/oauth2_user/authorize2' },
    token: { origin: 'https://wbsapi.withings.net', path: '/v2/oauth2' },
    revoke: null,
    pkce: false,
    scopeSeparator: ',',
    scopes: { 'user.info': ['profile'], 'user.metrics': ['body', 'heart'], 'user.activity': ['activity', 'sleep', 'workouts'] },
    clientAuth: 'body',
  },
};
