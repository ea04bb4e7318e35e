import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { adminMirror } from '../../src/server/adminMirror.js';
import { ADMIN_PREFIX, type RouteOptions } from '../../src/server/routes/routeOptions.js';

const T = '8d4f5a8e-0c1b-4c57-9a39-3f5b8a3f2c10';

/** A tenant plugin that knows nothing of admins. */
const things: FastifyPluginAsyncZod<RouteOptions> = async (app) => {
  app.get('/things/:id', { config: { auth: 'tenant' }, schema: { params: z.object({ id: z.string() }) } }, async (request) => ({ id: request.params.id, tenant: request.tenantId }));
  app.post('/things', { config: { auth: 'tenant' } }, async (_request, reply) => {
    reply.header('location', '/v1/things/abc');
    return reply.code(201).send({});
  });
  app.patch('/things/:id', { config: { auth: 'tenant' } }, async () => ({}));
  app.delete('/things/:id', { config: { auth: 'tenant' } }, async () => ({}));
};

async function serve(plugin: FastifyPluginAsyncZod<RouteOptions>, routes: string[]) {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const seen: { method: string; url: string; auth: unknown; params: unknown }[] = [];
  app.addHook('onRoute', (r) => {
    seen.push({ method: String(r.method), url: r.url, auth: r.config?.auth, params: r.schema?.params });
  });
  // As auth.ts does for the admin key: the tenant of the path.
  app.decorateRequest('tenantId', null);
  app.addHook('preValidation', async (request) => {
    request.tenantId = (request.params as { tenant_id?: string }).tenant_id?.toLowerCase() ?? null;
  });
  await app.register(adminMirror(plugin, routes), { ctx: {} as RouteOptions['ctx'], cursors: {} as RouteOptions['cursors'], prefix: ADMIN_PREFIX });
  await app.ready();
  return { app, seen };
}

describe('admin mirrors (spec "Instance admin routes": same parameters, body and answer; Location at the admin route; issue 24)', () => {
  it('registers only the routes named, with the admin key and the tenant_id path parameter', async () => {
    const { app, seen } = await serve(things, ['GET /things/:id', 'POST /things', 'PATCH /things/:id']);
    expect(seen.map((r) => `${r.method} ${r.url}`).sort()).toEqual([`GET ${ADMIN_PREFIX}/things/:id`, `HEAD ${ADMIN_PREFIX}/things/:id`, `PATCH ${ADMIN_PREFIX}/things/:id`, `POST ${ADMIN_PREFIX}/things`]);
    expect(seen.every((r) => r.auth === 'admin')).toBe(true);
    const get = seen.find((r) => r.method === 'GET')!;
    expect(Object.keys((get.params as z.ZodObject).shape)).toEqual(['id', 'tenant_id']);
    expect(Object.keys((seen.find((r) => r.method === 'POST')!.params as z.ZodObject).shape)).toEqual(['tenant_id']);
    const res = await app.inject({ method: 'DELETE', url: `/v1/admin/tenants/${T}/things/x` });
    expect(res.statusCode).toBe(404);
    await app.close();
  });

  it("the handler runs unchanged on the path's tenant; a read answers no Location", async () => {
    const { app } = await serve(things, ['GET /things/:id']);
    const res = await app.inject({ method: 'GET', url: `/v1/admin/tenants/${T.toUpperCase()}/things/x1` });
    expect(res.json()).toEqual({ id: 'x1', tenant: T });
    expect(res.headers.location).toBeUndefined();
    await app.close();
  });

  it("a mutation's Location is the tenant route's moved under the admin prefix, or the resource the request named", async () => {
    const { app } = await serve(things, ['POST /things', 'PATCH /things/:id']);
    const created = await app.inject({ method: 'POST', url: `/v1/admin/tenants/${T}/things` });
    expect(created.headers.location).toBe(`/v1/admin/tenants/${T}/things/abc`);
    const changed = await app.inject({ method: 'PATCH', url: `/v1/admin/tenants/${T}/things/ABC-1` });
    expect(changed.headers.location).toBe(`/v1/admin/tenants/${T}/things/abc-1`);
    await app.close();
  });

  it('refuses to start on a route the plugin does not have, or one that is not a tenant route', async () => {
    await expect(serve(things, ['GET /nothing'])).rejects.toThrow(/does not register: GET \/nothing/);
    const userRoute: FastifyPluginAsyncZod<RouteOptions> = async (app) => {
      app.get('/me', { config: { auth: 'user' } }, async () => ({}));
    };
    await expect(serve(userRoute, ['GET /me'])).rejects.toThrow(/only tenant routes are mirrored/);
  });
});
