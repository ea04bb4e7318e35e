import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditDetails, AuditRequest } from '../../../commands/audit/recordAudit.js';
import type { AuditDoc } from '../../../projections/audit/auditLogProjection.js';
import { listAuditLog } from '../../../queries/audit/listAuditLog.js';
import { DateTime, PageQuery, pageOf, withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

const AuditEntry = z
  .object({
    id: z.string(),
    at: DateTime,
    actor: z.enum(['admin', 'tenant', 'user', 'system']),
    actor_id: z.string().describe('admin, the id of the tenant key that made the call, or of the user token (agent interface)'),
    action: z.string(),
    ...AuditRequest,
  })
  .describe('Audit log entry');

const toEntry = (d: AuditDoc) => ({
  id: d.id,
  at: d.at,
  actor: d.actor as 'admin' | 'tenant' | 'user' | 'system',
  actor_id: d.actor_id,
  ...auditDetails(d),
});

/** Audit logs, newest first: the tenant's own, the admin's, and a tenant's as the admin sees it. */
export const auditLogRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  const list = async (log: string, query: { cursor?: string; limit: number }) => {
    const scope = `audit:${log}`;
    const after = query.cursor ? cursors.decode(query.cursor, scope) : null;
    // Audit entries are appended without waiting for their read model: the read waits instead.
    await ctx.settle(undefined, ['audit_log']);
    const page = await listAuditLog(ctx.readStore, log, { after, limit: query.limit });
    return { data: page.items.map(toEntry), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
  };
  const schema = (summary: string, params?: z.ZodObject) => ({
    summary,
    tags: ['audit'],
    querystring: PageQuery,
    ...(params ? { params } : {}),
    response: withProblems({ 200: pageOf(AuditEntry) }),
  });

  app.get('/v1/audit-log', { config: { auth: 'tenant' }, schema: schema("The tenant's audit log") }, async (request) => list(request.tenantId!, request.query));
  app.get('/v1/admin/audit-log', { config: { auth: 'admin' }, schema: schema("The instance admin's audit log") }, async (request) => list('admin', request.query));
  app.get(
    '/v1/admin/tenants/:tenant_id/audit-log',
    { config: { auth: 'admin' }, schema: schema("A tenant's audit log", z.object({ tenant_id: z.string() })) },
    async (request) => list(request.tenantId!, request.query),
  );
};
