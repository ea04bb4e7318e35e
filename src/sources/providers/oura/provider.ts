import { OURA } from '../../../catalog/providers.js';
import { describeProvider } from '../../shared/providerDescriptor.js';

/** Oura API v2: authorisation on cloud.ouraring.com, tokens and data on api.ouraring.com. */
export const oura = describeProvider(OURA, {
  authorize: { origin: 'https://cloud.ouraring.com', path: '/oauth/authorize' },
  token: { origin: 'https://api.ouraring.com', path: '/oauth/token' },
  revoke: { origin: 'https://api.ouraring.com', path: '/oauth/revoke', method: 'POST' },
  scopeSeparator: ' ',
  clientAuth: 'body',
});
