import { readProviderUserId } from '../../shared/readProviderUserId.js';
import { GOOGLE_HEALTH_ORIGIN, google } from './provider.js';

/** Google's id of the user (`users/me/identity` → `healthUserId`): its notifications name the user by it. */
export function readGoogleUserId(o: { baseUrl: string | undefined; accessToken: string }): Promise<string | null> {
  return readProviderUserId({ provider: google, origins: { data: GOOGLE_HEALTH_ORIGIN }, path: '/v4/users/me/identity', field: 'healthUserId', ...o });
}
