/**
 * Plays the user's browser through the consent flow against the provider sandbox, as the demo and
 * the tests need it: open authorize_url on the service (which binds the state to this "browser"
 * with a cookie and redirects), follow the sandbox's consent page (it agrees at once and redirects
 * back), then hand the redirect to the service's callback with the cookie, as a browser would.
 */

/** What the service answered one GET, as much as a browser following redirects needs. */
export type ServiceAnswer = { status: number; location: string | null; setCookies: string[] };
/** One GET to the service at a path and query, carrying a Cookie header ('' for none). */
export type ServiceGet<A extends ServiceAnswer> = (pathAndQuery: string, cookie: string) => Promise<A>;

/** The few cookie rules a browser applies here: later values replace earlier ones, Max-Age=0 removes. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(setCookies: readonly string[]): void {
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      if (attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1).trim());
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export const pathAndQueryOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

/**
 * The three hops of a consent: the service's start address, the sandbox's page, the service's
 * callback. Throws naming the hop that did not redirect. `jar` is the browser's cookies (a new,
 * empty browser when absent).
 */
export async function consentThroughSandbox<A extends ServiceAnswer>(
  authorizeUrl: string,
  get: ServiceGet<A>,
  jar = new CookieJar(),
): Promise<{ start: A; providerUrl: string; callbackUrl: string; callback: A }> {
  const start = await get(pathAndQueryOf(authorizeUrl), jar.header());
  jar.take(start.setCookies);
  if (start.status !== 302 || !start.location) throw new Error(`authorize_url answered ${start.status}`);
  const consent = await fetch(start.location, { redirect: 'manual' });
  await consent.arrayBuffer();
  const callbackUrl = consent.headers.get('location');
  if (consent.status !== 302 || !callbackUrl) throw new Error(`the sandbox's consent page answered ${consent.status}`);
  // The callback is on PUBLIC_BASE_URL, which may name a proxy in front: `get` reaches the service directly.
  const callback = await get(pathAndQueryOf(callbackUrl), jar.header());
  jar.take(callback.setCookies);
  return { start, providerUrl: start.location, callbackUrl, callback };
}

/** `get` for a service listening at `baseUrl`, over HTTP. */
export function fetchGet(baseUrl: string): ServiceGet<ServiceAnswer & { body: string }> {
  return async (pathAndQuery, cookie) => {
    const res = await fetch(`${baseUrl}${pathAndQuery}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    return { status: res.status, location: res.headers.get('location'), setCookies: res.headers.getSetCookie(), body: await res.text() };
  };
}
