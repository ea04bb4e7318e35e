import { STRAVA } from '../../../catalog/providers.js';
import { describeProvider } from '../../shared/providerDescriptor.js';

/** Strava API v3: consent, tokens and deauthorisation on www.strava.com; client ids are numbers. */
export const strava = describeProvider(STRAVA, {
  authorize: { origin: 'https://www.strava.com', path: '/oauth/authorize' },
  token: { origin: 'https://www.strava.com', path: '/oauth/token' },
  revoke: { origin: 'https://www.strava.com', path: '/oauth/deauthorize', method: 'POST' },
  scopeSeparator: ',',
  clientAuth: 'body',
});
