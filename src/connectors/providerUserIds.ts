import { readGarminUserId } from './garmin/userId.js';

/**
 * Providers whose user id must be asked for after the code exchange (their token answer does not
 * name the user) and is needed to route what they send: Garmin names users by it in every push.
 */
export const PROVIDER_USER_ID_READERS: Readonly<Partial<Record<string, (o: { baseUrl: string | undefined; accessToken: string }) => Promise<string>>>> = {
  garmin: readGarminUserId,
};
