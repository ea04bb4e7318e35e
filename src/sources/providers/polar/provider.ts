import { POLAR } from '../../../catalog/providers.js';
import { describeProvider } from '../../shared/providerDescriptor.js';

/** Polar AccessLink v3: consent on flow.polar.com, tokens on polarremote.com, data on www.polaraccesslink.com. */
export const polar = describeProvider(POLAR, {
  authorize: { origin: 'https://flow.polar.com', path: '/oauth2/authorization' },
  token: { origin: 'https://polarremote.com', path: '/v2/oauth2/token' },
  revoke: null,
  scopeSeparator: ' ',
  clientAuth: 'basic',
});
