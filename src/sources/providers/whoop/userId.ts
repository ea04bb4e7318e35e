import { readProviderUserId } from '../../shared/readProviderUserId.js';
import { whoop } from './provider.js';

export const WHOOP_PROFILE_PATH = '/developer/v2/user/profile/basic';

/** WHOOP's id of the member (`profile/basic` → `user_id`, a number): its webhooks name the member by it. */
export function readWhoopUserId(o: { baseUrl: string | undefined; accessToken: string }): Promise<string | null> {
  return readProviderUserId({ provider: whoop, origins: { data: 'https://api.prod.whoop.com' }, path: WHOOP_PROFILE_PATH, field: 'user_id', ...o });
}
