import { providerHttp } from '../../shared/providerHttp.js';
import type { DeregisterUser } from '../../shared/pullConnector.js';
import { polar } from './provider.js';

export const POLAR_ORIGINS = { data: 'https://www.polaraccesslink.com' } as const;

/**
 * AccessLink has no token revocation: a user stays registered with the application (and listed in
 * its admin tool) until the application deletes the registration, `DELETE /v3/users/{user-id}`
 * (issue 22). 204 is done, 404 was never registered or is gone already; both count as done.
 */
export const deregisterPolarUser: DeregisterUser = async ({ baseUrl, accessToken, providerUserId }) => {
  if (!providerUserId || !/^[0-9]{1,20}$/.test(providerUserId)) return false;
  try {
    const http = providerHttp({ provider: polar, baseUrl, origins: POLAR_ORIGINS, accessToken: () => accessToken });
    const answer = await http({ method: 'DELETE', path: `/v3/users/${providerUserId}` });
    return answer.status === 204 || answer.status === 200 || answer.status === 404;
  } catch {
    // Best effort, as revocation: the registration stays at Polar, the connection ends here anyway.
    return false;
  }
};
