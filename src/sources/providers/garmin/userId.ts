import { ProviderCallError } from '../../shared/oauthClient.js';
import { providerHttp } from '../../shared/providerHttp.js';
import { garmin } from './provider.js';

export const GARMIN_ORIGINS = { data: 'https://apis.garmin.com' } as const;
export const GARMIN_USER_ID_PATH = '/wellness-api/rest/user/id';

/**
 * Garmin's id of the user who just consented (`GET /wellness-api/rest/user/id` → `{"userId": …}`):
 * every push names the user by it, so the connection must know it before the first push arrives.
 */
export async function readGarminUserId(o: { baseUrl: string | undefined; accessToken: string }): Promise<string> {
  const http = providerHttp({ provider: garmin, baseUrl: o.baseUrl, origins: GARMIN_ORIGINS, accessToken: () => o.accessToken });
  const answer = await http({ path: GARMIN_USER_ID_PATH });
  let userId: unknown;
  try {
    userId = answer.status === 200 ? answer.json<{ userId?: unknown }>().userId : undefined;
  } catch {
    userId = undefined;
  }
  if (typeof userId !== 'string' || !/^[A-Za-z0-9._:-]{1,128}$/.test(userId)) throw new ProviderCallError('unavailable', 'Garmin did not answer the user id');
  return userId;
}
