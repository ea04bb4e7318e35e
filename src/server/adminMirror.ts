import type { FastifyInstance, FastifyRequest, RouteOptions as FastifyRouteOptions, RouteShorthandOptions } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ADMIN_PREFIX, adminLocation, type RouteOptions } from './routes/routeOptions.js';

const TenantParam = z.object({ tenant_id: z.string().describe('Tenant id (uuid)') });
const SHORTHANDS = new Set(['get', 'post', 'put', 'patch', 'delete']);
const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The admin's copy of tenant routes (spec "Instance admin routes"): `plugin` registered a second
 * time (under ADMIN_PREFIX), keeping only the routes named in `routes` (`'GET /users/:id'`). Each
 * copy takes the admin key instead of the tenant's, acts on the tenant of the path (auth.ts sets
 * `request.tenantId` from it), has the `tenant_id` path parameter in its schema (so the OpenAPI
 * document describes it), and answers a mutation with a Location pointing at the admin route: the
 * tenant route's own Location moved under the admin prefix, or the resource the request named.
 * The handlers are the tenant's, unchanged: nothing in them knows which copy runs; the audit log
 * records the admin as actor because the admin's key authenticated the call.
 */
export function adminMirror(plugin: FastifyPluginAsyncZod<RouteOptions>, routes: readonly string[]): FastifyPluginAsyncZod<RouteOptions> {
  return async (app, opts) => {
    const wanted = new Set(routes);
    const mirrored = new Set<string>();
    app.addHook('onSend', async (request, reply, payload) => {
      const tenantId = request.tenantId;
      if (!tenantId || reply.statusCode < 200 || reply.statusCode >= 300) return payload;
      const location = reply.getHeader('location');
      if (typeof location === 'string' && location.startsWith('/v1/')) reply.header('location', adminLocation(tenantId, location.slice('/v1'.length)));
      else if (location === undefined && MUTATIONS.has(request.method)) reply.header('location', adminLocation(tenantId, resourcePath(request)));
      return payload;
    });
    const copy = (method: string, url: string): boolean => {
      const key = `${method.toUpperCase()} ${url}`;
      if (!wanted.has(key)) return false;
      mirrored.add(key);
      return true;
    };
    const instance = app as unknown as FastifyInstance;
    const proxy = new Proxy(instance, {
      get(target, prop) {
        if (typeof prop === 'string' && SHORTHANDS.has(prop)) {
          return (url: string, options: RouteShorthandOptions, handler: unknown) => {
            if (copy(prop, url)) (target[prop as 'get'] as (u: string, o: RouteShorthandOptions, h: unknown) => unknown).call(target, url, adminOptions(options, `${prop} ${url}`), handler);
            return proxy;
          };
        }
        if (prop === 'route') {
          return (options: FastifyRouteOptions) => {
            const methods = [options.method].flat();
            if (methods.length === 1 && copy(methods[0]!, options.url)) target.route({ ...options, ...adminOptions(options, `${methods[0]} ${options.url}`) } as FastifyRouteOptions);
            return proxy;
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await plugin(proxy as unknown as Parameters<typeof plugin>[0], opts);
    const missing = routes.filter((r) => !mirrored.has(r));
    if (missing.length) throw new Error(`the admin mirror names routes its plugin does not register: ${missing.join(', ')}`);
  };
}

/** A tenant route's options as the admin's copy: the admin key, and the tenant in the path (a route without a params schema keeps its other parameters). */
function adminOptions<O extends RouteShorthandOptions>(options: O, route: string): O {
  if (options.config?.auth !== 'tenant') throw new Error(`only tenant routes are mirrored for the admin (${route} takes ${String(options.config?.auth)})`);
  const params = options.schema?.params as z.ZodObject | undefined;
  return { ...options, config: { ...options.config, auth: 'admin' }, schema: { ...options.schema, params: params ? params.extend(TenantParam.shape) : TenantParam.loose() } };
}

/** The admin route of the resource a request named: its route's path after the prefix, with the request's ids (written in lower case, as stored). */
function resourcePath(request: FastifyRequest): string {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const pattern = request.routeOptions.url!.slice(request.routeOptions.url!.indexOf(ADMIN_PREFIX) + ADMIN_PREFIX.length);
  return pattern.replace(/:([A-Za-z_]+)/g, (_, name: string) => String(params[name]).toLowerCase());
}
