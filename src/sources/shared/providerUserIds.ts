import { readGarminUserId } from '../providers/garmin/userId.js';
import { readOuraUserId } from '../providers/oura/userId.js';
import { readWhoopUserId } from '../providers/whoop/userId.js';

/**
 * Providers whose user id must be asked for after the code exchange (their token answer does not
 * name the user) and is needed to route what they send: Garmin names users by it in every push
 * (required: the consent fails without it), Oura and WHOOP in their webhooks (best effort: null
 * when the call is refused, and the connection is then pulled on its schedule only).
 */
export const PROVIDER_USER_ID_READERS: Readonly<Partial<Record<string, (o: { baseUrl: string | undefined; accessToken: string }) => Promise<string | null>>>> = {
  garmin: readGarminUserId,
  oura: readOuraUserId,
  whoop: readWhoopUserId,
};
