import { WITHINGS } from '../../../catalog/providers.js';
import { describeProvider } from '../../shared/providerDescriptor.js';

/** Withings public API: consent on account.withings.com, tokens (action=requesttoken) and data on wbsapi.withings.net. */
export const withings = describeProvider(WITHINGS, {
  authorize: { origin: 'https://account.withings.com', path: '/oauth2_user/authorize2' },
  token: { origin: 'https://wbsapi.withings.net', path: '/v2/oauth2' },
  revoke: null,
  scopeSeparator: ',',
  clientAuth: 'body',
});
