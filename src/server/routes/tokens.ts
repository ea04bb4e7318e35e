import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { mintUserToken, MAX_READ_ONLY_TOKEN_TTL_SECONDS, USER_SCOPES } from '../../../commands/users/mintUserToken.js';
import { UUID_RE } from '../../shared/ids.js';
import { newSecret, sha256Hex } from '../../shared/secrets.js';
import { problems } from '../problems.js';
import { DateTime, withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

const MintBody = z.object({
  scopes: z.array(z.enum(USER_SCOPES)).min(1).describe('At least one of upload, read, connect'),
  ttl_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_READ_ONLY_TOKEN_TTL_SECONDS)
    .optional()
    .describe('0 or absent = 3600; at most 86400, or 2592000 when read is the only scope'),
});

const UserToken = z
  .object({ token: z.string().describe('svc_ut_ secret, shown only here'), expires_at: DateTime, scopes: z.array(z.string()) })
  .describe('User token');

/** Spec "Credentials and users": POST /v1/users/{id}/tokens. */
export const tokensRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.post(
    '/users/:id/tokens',
    {
      config: { auth: 'tenant', audit: 'user.token_mint' },
      schema: {
        summary: 'Mint a user token',
        tags: ['users'],
        params: z.object({ id: z.string() }),
        body: MintBody,
        response: withProblems({ 201: UserToken }),
      },
    },
    async (request, reply) => {
      if (!UUID_RE.test(request.params.id)) throw problems.notFound('user not found');
      const token = newSecret('userToken');
      const result = await mintUserToken(ctx.eventStore, {
        tenantId: request.tenantId!,
        userId: request.params.id.toLowerCase(),
        tokenId: randomUUID(),
        tokenHash: sha256Hex(token),
        scopes: request.body.scopes,
        ttlSeconds: request.body.ttl_seconds ?? 0,
        at: new Date().toISOString(),
        by: request.principal!.actorId,
      });
      await ctx.settle(result.position, ['users']);
      const minted = result.newEvents[0]!;
      if (minted.type !== 'user.token_minted') throw new Error('unexpected event');
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ token, expires_at: minted.data.expires_at, scopes: minted.data.scopes });
    },
  );
};
