import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { registerUser, ExternalRef } from '../../../commands/users/registerUser.js';
import { requestUserDeletion } from '../../../commands/users/requestUserDeletion.js';
import type { UserDoc } from '../../../projections/users/usersProjection.js';
import { getUser } from '../../../queries/users/getUser.js';
import { listUsers } from '../../../queries/users/listUsers.js';
import { deterministicId, UUID_RE } from '../../shared/ids.js';
import { forgetUserCreation, idempotent } from '../idempotency.js';
import { StampedCache } from '../../shared/stampedCache.js';
import { problems } from '../problems.js';
import { DateTime, IdempotencyKeyHeader, PageQuery, pageOf, Uuid, withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

export const User = z
  .object({
    id: Uuid,
    external_ref: z.string().nullable(),
    status: z.enum(['active', 'deleting']),
    created_at: DateTime,
  })
  .describe('User');

export const toUser = (u: UserDoc) => ({ id: u.id, external_ref: u.external_ref, status: u.status, created_at: u.created_at });

const UserIdParams = z.object({ id: z.string().describe('User id (uuid)') });
const JSON_TYPE = 'application/json; charset=utf-8';

/** Users (spec "Credentials and users"). GET and DELETE of one user are mirrored on the admin routes. */
export const usersRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  const auth = 'tenant';
  // Answers of GET /users/{id} (issue 27: a client asks about its user on every sync), kept while
  // nothing in the read store changed; a user who is not found is never kept.
  const answers = new StampedCache<string>({ max: 10_000 });

  app.post(
    '/users',
    {
      config: { auth, audit: 'user.create' },
      schema: {
        summary: 'Create a user',
        tags: ['users'],
        headers: IdempotencyKeyHeader,
        body: z.object({ external_ref: ExternalRef.nullable().optional().describe("Caller's own identifier, unique per tenant") }).default({}),
        response: withProblems({ 201: User, 409: z.any(), 422: z.any() }),
      },
    },
    async (request, reply) =>
      idempotent(ctx.readStore, request, reply, async (reservation) => {
        const tenantId = request.tenantId!;
        // Under an Idempotency-Key the id derives from the tenant, the key and its reservation:
        // a retry after any failure registers (or finds) the same user, never a second one.
        const userId = reservation ? deterministicId('user', tenantId, reservation.seed) : randomUUID();
        const result = await registerUser(ctx.eventStore, {
          tenantId,
          userId,
          externalRef: request.body?.external_ref ?? null,
          at: new Date().toISOString(),
        });
        // Nothing appended (a retry found its user): wait for whatever the first attempt wrote.
        await ctx.settle(result.position || undefined, ['users']);
        const user = await getUser(ctx.readStore, tenantId, userId);
        return { status: 201, body: toUser(user!), headers: { location: `/v1/users/${userId}` }, resourceUserId: userId };
      }),
  );

  app.get(
    '/users',
    {
      config: { auth },
      schema: { summary: "List the tenant's users, oldest first", tags: ['users'], querystring: PageQuery, response: withProblems({ 200: pageOf(User) }) },
    },
    async (request) => {
      const scope = `users:${request.tenantId}`;
      const after = request.query.cursor ? cursors.decode(request.query.cursor, scope) : null;
      const page = await listUsers(ctx.readStore, request.tenantId!, { after, limit: request.query.limit });
      return { data: page.items.map(toUser), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );

  app.get(
    '/users/:id',
    {
      config: { auth },
      schema: { summary: 'Get a user', tags: ['users'], params: UserIdParams, response: withProblems({ 200: User }) },
    },
    async (request, reply) => {
      if (!UUID_RE.test(request.params.id)) throw problems.notFound('user not found');
      const userId = request.params.id.toLowerCase();
      const key = `${request.tenantId!}/${userId}`;
      // The stamp is asked before the user is read (by auth, or here): see StampedCache.
      const stamp = request.readStamp ?? ctx.readStore.changeStamp();
      let body = answers.get(stamp, key);
      if (body === undefined) {
        const user = await getUser(ctx.readStore, request.tenantId!, userId);
        if (!user) throw problems.notFound('user not found');
        // The route's own serializer (an answer that breaks the schema is still a 500), once per kept answer.
        body = reply.serialize(toUser(user)) as string;
        answers.set(stamp, key, body);
      }
      // A string is sent as it is, not serialized again.
      return reply.type(JSON_TYPE).send(body as never);
    },
  );

  app.delete(
    '/users/:id',
    {
      config: { auth, audit: 'user.delete' },
      schema: {
        summary: 'Delete a user (asynchronous job)',
        tags: ['users'],
        params: UserIdParams,
        response: withProblems({ 202: z.object({ job_id: Uuid }) }),
      },
    },
    async (request, reply) => {
      const tenantId = request.tenantId!;
      if (!UUID_RE.test(request.params.id)) throw problems.notFound('user not found');
      const userId = request.params.id.toLowerCase();
      const result = await requestUserDeletion(ctx.eventStore, {
        tenantId,
        userId,
        jobId: randomUUID(),
        at: new Date().toISOString(),
        by: request.principal!.actorId,
      });
      await forgetUserCreation(ctx.readStore, tenantId, userId);
      await ctx.settle(result.position || undefined, ['users', 'deletion_jobs']);
      ctx.deletions.kick();
      return reply.code(202).send({ job_id: result.jobId });
    },
  );
};
