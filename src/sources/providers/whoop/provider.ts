import { WHOOP } from '../../../catalog/providers.js';
import { describeProvider } from '../../shared/providerDescriptor.js';

/** WHOOP developer platform: every address on api.prod.whoop.com; client ids are UUIDs. */
export const whoop = describeProvider(WHOOP, {
  authorize: { origin: 'https://api.prod.whoop.com', path: '/oauth/oauth2/auth' },
  token: { origin: 'https://api.prod.whoop.com', path: '/oauth/oauth2/token' },
  revoke: { origin: 'https://api.prod.whoop.com', path: '/developer/v2/user/access', method: 'DELETE' },
  scopeSeparator: ' ',
  clientAuth: 'body',
});
