import { CLIENT_KEYS, clientKeysReason, type ProviderDescriptor } from '../../shared/providerDescriptor.js';
import { UUID_RE } from '../../../shared/ids.js';

/** WHOOP developer platform: every address on api.prod.whoop.com; client ids are UUIDs. */
export const whoop: ProviderDescriptor = {
  slug: 'whoop',
  name: 'WHOOP',
  kind: 'oauth',
  dataTypes: ['cycle', 'recovery', 'sleep', 'workout', 'body_measurement'],
  keys: CLIENT_KEYS,
  validateKeys: (k) =>
    clientKeysReason(k, UUID_RE.test(k.CLIENT_ID ?? '') ? null : 'WHOOP client ids are UUIDs'),
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
