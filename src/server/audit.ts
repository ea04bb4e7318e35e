import type { onSendHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { recordAudit, type AuditEntry } from '../../commands/audit/recordAudit.js';
import type { AppContext } from './appContext.js';
import { problemBody } from './problems.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Audit action name; tenant calls are audited only when set, admin calls always. */
    audit?: string;
  }
}

/**
 * Spec "Instance admin routes": every admin call goes into the admin's audit log and, with actor
 * `admin`, into the tenant's. A tenant's own changes go into its log too. Written before the
 * answer leaves, so an audited call that was answered is always in the log.
 */
export const auditPlugin = fp<{ ctx: AppContext }>(async (app, { ctx }) => {
  // Only routes that can be audited carry the hook (admin routes, and tenant routes naming an
  // action: a principal is an admin only on an admin route); the others pay nothing for it.
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === 'admin' || route.config?.audit) route.onSend = [...[route.onSend ?? []].flat(), audit];
  });
  const audit: onSendHookHandler = async (request, reply, payload) => {
    const p = request.principal;
    const action = request.routeOptions.config?.audit;
    if (!p || (p.kind !== 'admin' && !action)) return payload;
    const base = {
      action: action ?? `${request.method} ${request.routeOptions.url ?? ''}`,
      method: request.method,
      path: request.url.split('?')[0] ?? request.url,
      status: reply.statusCode,
      tenant_id: request.tenantId,
      request_id: request.id,
      target: (request.params as { id?: string } | undefined)?.id ?? null,
      at: new Date().toISOString(),
    };
    const entries: AuditEntry[] = [];
    if (p.kind === 'admin') {
      entries.push({ ...base, log: 'admin', actor: 'admin', actor_id: 'admin' });
      if (request.tenantId) entries.push({ ...base, log: request.tenantId, actor: 'admin', actor_id: 'admin' });
    } else if (p.kind === 'tenant') {
      entries.push({ ...base, log: p.tenantId, actor: 'tenant', actor_id: p.keyId });
    }
    // Durable before the answer; applied to the audit log read model in the background (its
    // reads wait for it: see docs/read-your-writes.md).
    if (!entries.length) return payload;
    try {
      await recordAudit(ctx.eventStore, entries);
    } catch (err) {
      // An answer that cannot be audited does not leave: a bare 500 goes instead (Errors 1). An
      // error thrown from here would reach fastify's fallback handler, which writes its message.
      request.log.error({ err }, 'the audit entry of an answer could not be written');
      reply.code(500).type('application/problem+json').removeHeader('location');
      return JSON.stringify(problemBody(request, 500, 'internal error'));
    }
    return payload;
  };
});
