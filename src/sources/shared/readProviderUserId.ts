import type { ProviderDescriptor } from './providerDescriptor.js';
import { providerHttp } from './providerHttp.js';

const PROVIDER_USER_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Best effort: the provider's id of the user who just consented, read with one call after the code
 * exchange, for providers whose token answer does not name the user. Only their webhooks need it
 * (to find the connection a notification names), so a call refused (a scope not granted) or
 * failing leaves the connection without it rather than failing the consent; scheduled pulls still
 * collect its data.
 */
export async function readProviderUserId(o: {
  provider: ProviderDescriptor;
  origins: Readonly<Record<string, string>>;
  path: string;
  field: string;
  baseUrl: string | undefined;
  accessToken: string;
}): Promise<string | null> {
  try {
    const http = providerHttp({ provider: o.provider, baseUrl: o.baseUrl, origins: o.origins, accessToken: () => o.accessToken });
    const answer = await http({ path: o.path });
    if (answer.status !== 200) return null;
    const v = answer.json<Record<string, unknown>>()[o.field];
    const id = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v;
    return typeof id === 'string' && PROVIDER_USER_ID.test(id) ? id : null;
  } catch {
    return null;
  }
}
