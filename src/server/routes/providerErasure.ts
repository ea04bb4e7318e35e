import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requestProviderErasure } from '../../../commands/deletions/requestProviderErasure.js';
import type { AppContext } from '../appContext.js';
import { PROVIDER_KINDS, providerKind } from '../../catalog/providerKinds.js';
import { UUID_RE } from '../../shared/ids.js';
import { problems } from '../problems.js';
import { Uuid, withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

/**
 * Requests the erasure of one provider's data of a user and answers its job: what the data route
 * and, with connections, a disconnect with delete_data=true both call (after disconnecting, that
 * one passes `connected: false`). Spec "Credentials and users" and "Provider erasure".
 */
export async function startProviderErasure(ctx: AppContext, r: { tenantId: string; userId: string; provider: string; by: string; connected?: boolean }): Promise<string> {
  let connected = r.connected;
  if (connected === undefined) {
    connected = false;
    for (const h of ctx.erasureHooks) if (await h.isConnected?.(r.tenantId, r.userId, r.provider)) connected = true;
  }
  const result = await requestProviderErasure(ctx.eventStore, { tenantId: r.tenantId, userId: r.userId, provider: r.provider, at: new Date().toISOString(), by: r.by, connected });
  // The job is readable (GET /v1/deletions/{job_id}) as soon as it is answered.
  await ctx.settle(result.position || undefined, ['deletion_jobs']);
  ctx.deletions.kick();
  return result.jobId;
}

/** DELETE /v1/users/{id}/data/{provider}: erases a provider's data without touching connections; 202 {job_id}. */
export const providerErasureRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.delete(
    '/users/:id/data/:provider',
    {
      config: { auth: 'tenant', audit: 'user.data_erase' },
      schema: {
        summary: "Erase one provider's data of a user (asynchronous job)",
        description:
          'Erases every record, raw payload, rejected line and ETL job of the user from that provider; the user, other providers and the source order stay. ' +
          'A repeated request while the job is unfinished answers the same job. 409 while the user is connected to the provider; 404 for a provider unknown to this build.',
        tags: ['users'],
        params: z.object({ id: z.string().describe('User id (uuid)'), provider: z.string().describe('Provider slug') }),
        response: withProblems({ 202: z.object({ job_id: Uuid }) }, [400, 401, 403, 404, 409]),
      },
    },
    async (request, reply) => {
      if (!UUID_RE.test(request.params.id)) throw problems.notFound('user not found');
      if (!providerKind(request.params.provider)) throw problems.unknownSlug('provider', request.params.provider, Object.keys(PROVIDER_KINDS));
      const jobId = await startProviderErasure(ctx, {
        tenantId: request.tenantId!,
        userId: request.params.id.toLowerCase(),
        provider: request.params.provider,
        by: request.principal!.actorId,
      });
      return reply.code(202).send({ job_id: jobId });
    },
  );
};
