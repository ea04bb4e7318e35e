import { CLIENT_KEYS, clientKeysReason, type ProviderDescriptor } from '../../shared/providerDescriptor.js';
import { UUID_RE } from '../../../shared/ids.js';

/** Polar AccessLink v3: consent on flow.polar.com, tokens on polarremote.com, data on www.polaraccesslink.com. */
export const polar: ProviderDescriptor = {
  slug: 'polar',
  name: 'Polar',
  kind: 'oauth',
  dataTypes: ['exercises', 'activities', 'physical_information', 'sleep', 'nightly_recharge', 'continuous_heart_rate'],
  keys: CLIENT_KEYS,
  validateKeys: (k) =>
    clientKeysReason(k, UUID_RE.test(k.CLIENT_ID ?? '') ? null : 'Polar client ids are UUIDs'),
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
