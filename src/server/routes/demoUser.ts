import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ExternalRef } from '../../../commands/users/registerUser.js';
import { fillDemoUser } from '../../processes/demo/fillDemoUser.js';
import { DEMO_PERSONAS } from '../../sources/files/demo/personas.js';
import { withProblems } from '../schemas.js';
import { toUser, User } from './users.js';
import { adminLocation, type RouteOptions } from './routeOptions.js';

const DemoUserBody = z.object({
  external_ref: ExternalRef.optional().describe('The user to fill (reused or created); default demo-user for mix, else demo-<persona>'),
  days: z.number().int().min(1).max(90).default(30).describe('Days of data ending yesterday, 1 to 90 (default 30)'),
  persona: z.enum(DEMO_PERSONAS).default('mix').describe('mix (two overlapping sources), runner, sleep or weight'),
});

const DemoUserAnswer = z
  .object({
    user: User,
    days: z.number().int(),
    rows_written: z.number().int().describe('Records written; 0 when every day already had demo data'),
    persona: z.enum(DEMO_PERSONAS),
  })
  .describe('Demo user answer');

/** POST /v1/admin/tenants/{tenant_id}/demo-user (spec "Instance admin routes"): a user filled with synthetic data. */
export const demoUserRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.post(
    '/demo-user',
    {
      config: { auth: 'admin', audit: 'data.write' },
      schema: {
        summary: 'Fill a user of the tenant with synthetic data (demo personas)',
        description:
          'Every record is marked metadata.synthetic = true and comes through the demo provider, written the way uploads are. Days that already hold demo data are left as they are.',
        tags: ['admin'],
        params: z.object({ tenant_id: z.string().describe('Tenant id (uuid)') }),
        body: DemoUserBody.default({ days: 30, persona: 'mix' }),
        response: withProblems({ 200: DemoUserAnswer, 409: z.any() }),
      },
    },
    async (request, reply) => {
      const tenantId = request.tenantId!;
      const body = request.body;
      const result = await fillDemoUser(ctx, { tenantId, persona: body.persona, externalRef: body.external_ref, days: body.days });
      reply.header('location', adminLocation(tenantId, `/users/${result.user.id}`));
      return { user: toUser(result.user), days: result.days, rows_written: result.rows_written, persona: result.persona };
    },
  );
};
