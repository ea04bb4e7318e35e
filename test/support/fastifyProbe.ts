import type { FastifyInstance } from 'fastify';

/**
 * A seam into the fastify instance that `buildServer` creates and readies itself. A test file
 * opts in with
 *
 *   vi.mock('fastify', async (importOriginal) => (await import('../support/fastifyProbe.js')).probedFastify(await importOriginal()));
 *
 * and then every instance built in that file
 *  - records each route as it is registered (`probe.routes`), so a test can compare the routes
 *    the server really serves with what it publishes, and
 *  - gets the routes in `probe.extraRoutes` registered just before its first `ready()`, after
 *    all of buildServer's plugins (auth, audit, error handling), so a test can add a route the
 *    product has not got yet, e.g. one that needs a user token.
 *
 * This module imports nothing from src/ on purpose: it is loaded from inside the mock factory.
 */
export type RecordedRoute = { method: string; url: string };

export const probe: {
  routes: RecordedRoute[];
  extraRoutes: ((app: FastifyInstance) => void)[];
} = { routes: [], extraRoutes: [] };

/** Path of the extra test route that needs a user token; it answers the authenticated principal. */
export const USER_ROUTE = '/v1/test-only/whoami';

/** Registers USER_ROUTE (`config: { auth: 'user' }`) on every instance built afterwards in this file. */
export function addUserRoute(): void {
  probe.extraRoutes.push((app) => {
    app.get(USER_ROUTE, { config: { auth: 'user' }, schema: { hide: true } }, async (request) => ({
      principal: (request as unknown as { principal: unknown }).principal,
    }));
  });
}

type FastifyFactory = (opts?: Record<string, unknown>) => FastifyInstance;

export function probedFastify<M extends Record<string, unknown>>(original: M): M {
  const realFactory = ((original as { default?: unknown }).default ?? original) as FastifyFactory;
  const factory = ((opts?: Record<string, unknown>) => {
    const app = realFactory(opts);
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) probe.routes.push({ method: String(method).toUpperCase(), url: route.url });
    });
    const realReady = app.ready.bind(app) as (...args: unknown[]) => unknown;
    let extrasAdded = false;
    (app as unknown as { ready: (...args: unknown[]) => unknown }).ready = (...args: unknown[]) => {
      if (!extrasAdded) {
        extrasAdded = true;
        for (const add of probe.extraRoutes) add(app);
      }
      return realReady(...args);
    };
    return app;
  }) as unknown as FastifyFactory;
  Object.assign(factory, realFactory);
  return { ...original, default: factory, fastify: factory };
}
