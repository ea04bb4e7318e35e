import { DEXCOM } from '../../../catalog/providers.js';
import { describeProvider } from '../../shared/providerDescriptor.js';

/**
 * Dexcom API v3: the login page, token endpoint and data API share one origin per environment
 * (production https://api.dexcom.com; DEXCOM_ENVIRONMENT=sandbox or DEXCOM_BASE_URL replaces it).
 * The OAuth endpoints keep their v2 paths in v3. No revocation endpoint is documented.
 */
export const DEXCOM_ORIGIN = 'https://api.dexcom.com';

export const dexcom = describeProvider(DEXCOM, {
  authorize: { origin: DEXCOM_ORIGIN, path: '/v2/oauth2/login' },
  token: { origin: DEXCOM_ORIGIN, path: '/v2/oauth2/token' },
  revoke: null,
  scopeSeparator: ' ',
  clientAuth: 'body',
});
