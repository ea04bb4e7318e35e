import { FITBIT } from '../../../catalog/providers.js';
import { describeProvider } from '../../shared/providerDescriptor.js';

/** Fitbit Web API: consent on www.fitbit.com, tokens, revocation and data on api.fitbit.com; PKCE supported. */
export const fitbit = describeProvider(FITBIT, {
  authorize: { origin: 'https://www.fitbit.com', path: '/oauth2/authorize' },
  token: { origin: 'https://api.fitbit.com', path: '/oauth2/token' },
  revoke: { origin: 'https://api.fitbit.com', path: '/oauth2/revoke', method: 'POST' },
  scopeSeparator: ' ',
  clientAuth: 'basic',
});
