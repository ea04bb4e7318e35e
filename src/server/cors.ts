import fp from 'fastify-plugin';
import type { FastifyContextConfig } from 'fastify';
import { kindsOf } from './auth.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Whether a web app on a CORS_ORIGINS origin may call the route (contracts §17). Unset: the
     * routes a user token may call, the credential a browser app holds; tenant and admin keys
     * are server-side secrets and their routes answer no browser of another origin.
     */
    cors?: boolean;
  }
}

/** The request headers the browser routes read (contracts §17; `Upload-Time-Zone` with them), allowed in a preflight. */
const ALLOW_HEADERS = 'Authorization, Content-Type, Upload-Id, Idempotency-Key, Tus-Resumable, Upload-Length, Upload-Offset, Upload-Metadata, Upload-Time-Zone';
/** The answer headers a browser app needs to resume a tus upload or back off, which CORS hides otherwise. */
const EXPOSE_HEADERS = 'Location, Upload-Offset, Upload-Length, Upload-Expires, Tus-Resumable, Tus-Version, Tus-Max-Size, Tus-Extension, Retry-After';
/** How long a browser may keep a preflight's answer: the routes change only with a new release. */
const PREFLIGHT_MAX_AGE_S = '600';

const isBrowserRoute = (config: FastifyContextConfig | undefined) => config?.cors ?? kindsOf(config?.auth).includes('user');

/** A route's URL as a pattern of whole paths: a parameter is one segment, a wildcard the rest. */
function pathPattern(url: string): RegExp {
  const segments = url.split('/').map((s) => (s.startsWith(':') ? '[^/]+' : s === '*' ? '.*' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}$`);
}

/**
 * Browser apps (contracts §17, CORS_ORIGINS): a page on a listed origin may call the routes a
 * user token may call and the tus routes. Registered before the credential check (auth.ts): a
 * preflight carries no credential, so it is answered here, 204 with the methods its path takes
 * and the headers those routes read, whatever route (or none: a tus upload's address has no
 * OPTIONS route) the path leads to. An actual request from a listed origin to a browser route
 * gets the origin allowed and the tus and back-off headers exposed, on refusals (401, 429) too,
 * so the app can read them. Any other origin, and every route a user token cannot call, gets no
 * CORS header; with no origin listed nothing is added. No credentials mode: the service takes
 * bearer tokens, never cookies, from these apps.
 */
export const corsPlugin = fp<{ origins: readonly string[] }>(async (app, { origins }) => {
  if (origins.length === 0) return;
  const listed = new Set(origins);
  // Filled as routes are added: bounded by the service's own routes, never by a caller.
  const browserRoutes: { pattern: RegExp; method: string }[] = [];
  app.addHook('onRoute', (route) => {
    if (!isBrowserRoute(route.config)) return;
    const pattern = pathPattern(route.url);
    for (const method of [route.method].flat()) browserRoutes.push({ pattern, method });
  });
  const methodsAt = (url: string) => {
    const path = url.split('?')[0]!;
    return [...new Set(browserRoutes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
  };

  app.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || !listed.has(origin)) return done();
    if (request.method === 'OPTIONS' && typeof request.headers['access-control-request-method'] === 'string') {
      const methods = methodsAt(request.url);
      if (methods.length === 0) return done();
      void reply
        .header('access-control-allow-origin', origin)
        .header('access-control-allow-methods', methods.join(', '))
        .header('access-control-allow-headers', ALLOW_HEADERS)
        .header('access-control-max-age', PREFLIGHT_MAX_AGE_S)
        .header('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers')
        .code(204)
        .send();
      return;
    }
    if (!isBrowserRoute(request.routeOptions.config)) return done();
    reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', EXPOSE_HEADERS).header('vary', 'Origin');
    done();
  });
});
