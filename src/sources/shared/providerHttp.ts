import { PROVIDER_CALL_TIMEOUT_MS, throwForStatus } from './providerCallError.js';
import type { ProviderDescriptor } from './providerDescriptor.js';
import { callProvider, jsonObject } from './providerFetch.js';
import { ProviderOrigins } from './providerOrigins.js';
import type { ProviderAnswer, ProviderHttp, ProviderRequest } from './pullConnector.js';

export type ProviderHttpOptions = {
  provider: ProviderDescriptor;
  /** `<SLUG>_BASE_URL`: replaces the origin of every documented address, keeping the path. */
  baseUrl: string | undefined;
  /** The provider's documented origins by name (`data` first); a request names one with `origin`. */
  origins: Readonly<Record<string, string>>;
  /** Asked before every call, so a token refreshed during a long run is used at once. */
  accessToken: () => Promise<string> | string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The most one answer may hold (default PROVIDER_ANSWER_MAX_BYTES). */
  maxAnswerBytes?: number;
};

/**
 * The data-API client a connector pulls with: bearer token, the provider's documented addresses
 * (or the sandbox's), and every refusal classed the way the sync engine acts on it
 * (ProviderCallError: refused, rate_limited, unavailable, rejected). Links the provider answers
 * with are followed only on its own origins, so the token goes nowhere else (providerOrigins.ts);
 * each call goes through callProvider (providerFetch.ts: SSRF guard, no redirects, answers
 * capped as they stream, a time-out per call).
 */
export function providerHttp(o: ProviderHttpOptions): ProviderHttp {
  const origins = new ProviderOrigins(o.provider, Object.values(o.origins), o.baseUrl);
  return async (r: ProviderRequest): Promise<ProviderAnswer> => {
    // Checked before the token is asked for: a refused address never sees it.
    const url = requestUrl(o, origins, r);
    const headers: Record<string, string> = { authorization: `Bearer ${await o.accessToken()}`, accept: 'application/json' };
    let body: string | undefined;
    if (r.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(r.form).toString();
    } else if (r.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(r.json);
    }
    const res = await callProvider({
      provider: o.provider,
      origins,
      url,
      method: r.method ?? (body !== undefined ? 'POST' : 'GET'),
      headers,
      body,
      signal: o.signal,
      timeoutMs: o.timeoutMs ?? PROVIDER_CALL_TIMEOUT_MS,
      maxBytes: o.maxAnswerBytes,
    });
    if (res.status !== 404) throwForStatus(o.provider, res, res.status >= 200 && res.status < 300 ? {} : jsonObject(res.body));
    const bytes = res.body;
    return { status: res.status, headers: res.headers, body: bytes, json: <T>() => JSON.parse(bytes.toString('utf8')) as T };
  };
}

function requestUrl(o: ProviderHttpOptions, origins: ProviderOrigins, r: ProviderRequest): URL {
  // A provider's own link (`next`, a transaction's items): on its origins only, moved to the configured one.
  if (r.url) return origins.follow(r.url);
  const originName = r.origin ?? 'data';
  const documented = o.origins[originName];
  if (!documented) throw new Error(`${o.provider.name} has no documented origin named ${originName}`);
  const url = origins.at(documented, r.path);
  for (const [k, v] of Object.entries(r.query ?? {})) url.searchParams.set(k, v);
  return url;
}
