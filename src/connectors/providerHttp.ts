import { PROVIDER_CALL_TIMEOUT_MS, ProviderCallError, throwForStatus } from './oauthClient.js';
import type { ProviderDescriptor } from './providerDescriptor.js';
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
};

/**
 * The data-API client a connector pulls with: bearer token, the provider's documented addresses
 * (or the sandbox's), a time-out per call, and every refusal classed the way the sync engine
 * acts on it (ProviderCallError: refused, rate_limited, unavailable).
 */
export function providerHttp(o: ProviderHttpOptions): ProviderHttp {
  return async (r: ProviderRequest): Promise<ProviderAnswer> => {
    const url = requestUrl(o, r);
    const headers: Record<string, string> = { authorization: `Bearer ${await o.accessToken()}`, accept: 'application/json' };
    let body: URLSearchParams | string | undefined;
    if (r.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(r.form);
    } else if (r.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(r.json);
    }
    const timeout = AbortSignal.timeout(o.timeoutMs ?? PROVIDER_CALL_TIMEOUT_MS);
    let res: Response;
    try {
      res = await fetch(url, { method: r.method ?? (r.form || r.json !== undefined ? 'POST' : 'GET'), headers, body, signal: o.signal ? AbortSignal.any([o.signal, timeout]) : timeout });
    } catch (err) {
      if (o.signal?.aborted) throw err;
      const reason = (err as Error).name === 'TimeoutError' ? 'time-out' : (err as Error).message;
      throw new ProviderCallError('unavailable', `${o.provider.name} did not answer ${url.pathname}: ${reason}`);
    }
    const bytes = Buffer.from(await res.arrayBuffer());
    if (!res.ok && res.status !== 404) {
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
      } catch {
        // Judged by the status alone.
      }
      throwForStatus(o.provider, res, json);
    }
    return { status: res.status, headers: res.headers, body: bytes, json: <T>() => JSON.parse(bytes.toString('utf8')) as T };
  };
}

function requestUrl(o: ProviderHttpOptions, r: ProviderRequest): URL {
  if (r.url) {
    // A provider's own `next` link: keep its path and query, on the configured origin.
    const next = new URL(r.url);
    if (!o.baseUrl) return next;
    const url = new URL(next.pathname + next.search, o.baseUrl.replace(/\/+$/, '') + '/');
    return url;
  }
  const originName = r.origin ?? 'data';
  const documented = o.origins[originName];
  if (!documented) throw new Error(`${o.provider.name} has no documented origin named ${originName}`);
  const url = new URL(r.path, (o.baseUrl ? o.baseUrl.replace(/\/+$/, '') : documented) + '/');
  for (const [k, v] of Object.entries(r.query ?? {})) url.searchParams.set(k, v);
  return url;
}
