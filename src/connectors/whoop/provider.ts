import { CLIENT_KEYS, firstReason, plainValue, type ProviderDescriptor } from '../providerDescriptor.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** WHOOP developer platform: every address on api.prod.whoop.com; client ids are UUIDs. */
export const whoop: ProviderDescriptor = {
  slug: 'whoop',
  name: 'WHOOP',
  kind: 'oauth',
  dataTypes: ['cycle', 'recovery', 'sleep', 'workout', 'body_measurement', 'profile'],
  keys: CLIENT_KEYS,
  validateKeys: (k) =>
    firstReason(plainValue('CLIENT_ID', k.CLIENT_ID), plainValue('CLIENT_SECRET', k.CLIENT_SECRET), UUID.test(k.CLIENT_ID ?? '') ? null : 'WHOOP client ids are UUIDs'),
  oauth: {
    authorize: { origin: 'https://api.prod.whoop.com', path: '/oauth/oauth2/auth' },
    token: { origin: 'https://api.prod.whoop.com', path: '/oauth/oauth2/token' },
    revoke: { origin: 'https://api.prod.whoop.com', path: '/developer/v2/user/access', method: 'DELETE' },
    pkce: false,
    scopeSeparator: ' ',
    scopes: {
      offline: [],
      'read:profile': ['profile'],
      'read:cycles': ['activity'],
      'read:recovery': ['heart'],
      'read:sleep': ['sleep'],
      'read:workout': ['workouts'],
      'read:body_measurement': ['body'],
    },
    clientAuth: 'body',
  },
};
