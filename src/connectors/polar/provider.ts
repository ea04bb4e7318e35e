import { CLIENT_KEYS, firstReason, plainValue, type ProviderDescriptor } from '../providerDescriptor.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Polar AccessLink v3: consent on flow.polar.com, tokens on polarremote.com, data on www.polaraccesslink.com. */
export const polar: ProviderDescriptor = {
  slug: 'polar',
  name: 'Polar',
  kind: 'oauth',
  dataTypes: ['exercises', 'activities', 'sleep', 'nightly_recharge', 'continuous_heart_rate'],
  keys: CLIENT_KEYS,
  validateKeys: (k) =>
    firstReason(plainValue('CLIENT_ID', k.CLIENT_ID), plainValue('CLIENT_SECRET', k.CLIENT_SECRET), UUID.test(k.CLIENT_ID ?? '') ? null : 'Polar client ids are UUIDs'),
  oauth: {
    authorize: { origin: 'https://flow.polar.com', path: '/oauth2/authorization' },
    token: { origin: 'https://polarremote.com', path: '/v2/oauth2/token' },
    revoke: null,
    pkce: false,
    scopeSeparator: ' ',
    scopes: { 'accesslink.read_all': ['activity', 'heart', 'sleep', 'workouts'] },
    clientAuth: 'basic',
  },
};
