import { readProviderUserId } from '../../shared/readProviderUserId.js';
import { oura } from './provider.js';

export const OURA_PERSONAL_INFO_PATH = '/v2/usercollection/personal_info';

/** Oura's id of the user (`personal_info` → `id`): its webhook notifications name the user by it. */
export function readOuraUserId(o: { baseUrl: string | undefined; accessToken: string }): Promise<string | null> {
  return readProviderUserId({ provider: oura, origins: { data: 'https://api.ouraring.com' }, path: OURA_PERSONAL_INFO_PATH, field: 'id', ...o });
}
