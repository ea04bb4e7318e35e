import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createTenant } from '../../../commands/tenants/createTenant.js';
import { issueApiKey } from '../../../commands/tenants/issueApiKey.js';
import { revokeApiKey } from '../../../commands/tenants/revokeApiKey.js';
import { findApiKeyById, listApiKeys } from '../../../queries/tenants/findApiKey.js';
import { getTenant, listTenants } from '../../../queries/tenants/listTenants.js';
import { UUID_RE } from '../../shared/ids.js';
import { newSecret, sha256Hex } from '../../shared/secrets.js';
import { problems } from '../problems.js';
import { DateTime, PageQuery, pageOf, Uuid, withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

const Tenant = z.object({ id: Uuid, name: z.string(), created_at: DateTime }).describe('Tenant');
const TenantParam = z.object({ tenant_id: z.string() });

/** contracts.md §2: tenants and their keys, out of band, with the instance admin key. */
export const adminTenantsRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.post(
    '/v1/admin/tenants',
    {
      config: { auth: 'admin', audit: 'tenant.create' },
      schema: {
        summary: 'Create a tenant with its first API key',
        description: 'Tenant names are unique on the instance, compared without case and with white space collapsed: a name in use answers 409.',
        tags: ['admin'],
        body: z.object({ name: z.string().trim().min(1).max(255) }),
        response: withProblems({ 201: Tenant.extend({ api_key: z.string().describe('svc_sk_ key, shown once') }) }, [400, 401, 403, 404, 409]),
      },
    },
    async (request, reply) => {
      const tenantId = randomUUID();
      const apiKey = newSecret('tenantKey');
      const at = new Date().toISOString();
      const result = await createTenant(ctx.eventStore, { tenantId, name: request.body.name, keyId: randomUUID(), keyHash: sha256Hex(apiKey), at, by: 'admin' });
      await ctx.settle(result.position, ['tenants']);
      request.tenantId = tenantId;
      return reply
        .code(201)
        .header('location', `/v1/admin/tenants/${tenantId}`)
        .header('cache-control', 'no-store')
        .send({ id: tenantId, name: request.body.name, created_at: at, api_key: apiKey });
    },
  );

  app.get(
    '/v1/admin/tenants',
    {
      config: { auth: 'admin' },
      schema: { summary: 'List tenants', tags: ['admin'], querystring: PageQuery, response: withProblems({ 200: pageOf(Tenant) }) },
    },
    async (request) => {
      const after = request.query.cursor ? cursors.decode(request.query.cursor, 'tenants') : null;
      const page = await listTenants(ctx.readStore, { after, limit: request.query.limit });
      return {
        data: page.items.map((t) => ({ id: t.id, name: t.name, created_at: t.created_at })),
        next_cursor: page.next ? cursors.encode(page.next, 'tenants') : null,
      };
    },
  );

  app.get(
    '/v1/admin/tenants/:tenant_id',
    {
      config: { auth: 'admin' },
      schema: { summary: 'Get a tenant', tags: ['admin'], params: TenantParam, response: withProblems({ 200: Tenant }) },
    },
    async (request) => {
      const t = (await getTenant(ctx.readStore, request.tenantId!))!;
      return { id: t.id, name: t.name, created_at: t.created_at };
    },
  );

  app.get(
    '/v1/admin/tenants/:tenant_id/api-keys',
    {
      config: { auth: 'admin' },
      schema: {
        summary: "A tenant's API keys, oldest first (ids and dates; the secrets are never kept)",
        tags: ['admin'],
        params: TenantParam,
        response: withProblems({ 200: z.object({ data: z.array(z.object({ id: Uuid, created_at: DateTime, revoked_at: DateTime.nullable() })) }) }),
      },
    },
    async (request) => {
      const keys = await listApiKeys(ctx.readStore, request.tenantId!);
      return { data: keys.map((k) => ({ id: k.key_id, created_at: k.created_at, revoked_at: k.revoked_at })) };
    },
  );

  app.post(
    '/v1/admin/tenants/:tenant_id/api-keys',
    {
      config: { auth: 'admin', audit: 'tenant.api_key_issue' },
      schema: {
        summary: 'Issue another API key for a tenant',
        tags: ['admin'],
        params: TenantParam,
        response: withProblems({ 201: z.object({ id: Uuid, api_key: z.string().describe('svc_sk_ key, shown once'), created_at: DateTime }) }),
      },
    },
    async (request, reply) => {
      const keyId = randomUUID();
      const apiKey = newSecret('tenantKey');
      const at = new Date().toISOString();
      const result = await issueApiKey(ctx.eventStore, { tenantId: request.tenantId!, keyId, keyHash: sha256Hex(apiKey), at, by: 'admin' });
      await ctx.settle(result.position, ['tenants']);
      return reply
        .code(201)
        .header('location', `/v1/admin/tenants/${request.tenantId}/api-keys/${keyId}`)
        .header('cache-control', 'no-store')
        .send({ id: keyId, api_key: apiKey, created_at: at });
    },
  );

  app.delete(
    '/v1/admin/tenants/:tenant_id/api-keys/:key_id',
    {
      config: { auth: 'admin', audit: 'tenant.api_key_revoke' },
      schema: {
        summary: "Revoke a tenant's API key",
        tags: ['admin'],
        params: TenantParam.extend({ key_id: z.string() }),
        response: withProblems({ 204: z.null().describe('Revoked') }),
      },
    },
    async (request, reply) => {
      const key = UUID_RE.test(request.params.key_id) ? await findApiKeyById(ctx.readStore, request.params.key_id.toLowerCase()) : null;
      if (!key || key.tenant_id !== request.tenantId) throw problems.notFound('api key not found');
      const result = await revokeApiKey(ctx.eventStore, { tenantId: key.tenant_id, keyId: key.key_id, at: new Date().toISOString(), by: 'admin' });
      await ctx.settle(result.position || undefined, ['tenants']);
      return reply.code(204).header("location", `/v1/admin/tenants/${request.tenantId}/api-keys/${key.key_id}`).send(null);
    },
  );
};
