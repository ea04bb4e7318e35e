import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createTag } from '../../../commands/tags/createTag.js';
import { TAG_KINDS } from '../../../commands/tags/tag.js';
import type { TagDoc } from '../../../projections/tags/tagsProjection.js';
import { getTag } from '../../../queries/tags/getTag.js';
import { listTags } from '../../../queries/tags/listTags.js';
import { deterministicId } from '../../shared/ids.js';
import { parseTimeParam } from '../../shared/timeWindow.js';
import { idempotent } from '../idempotency.js';
import { problems } from '../problems.js';
import { DateTime, IdempotencyKeyHeader, pageOf, Uuid, withProblems } from '../schemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams, WindowQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

const TagKind = z.enum(TAG_KINDS).describe('What the period was');

export const Tag = z
  .object({
    tag_id: Uuid,
    kind: TagKind,
    label: z.string().nullable(),
    note: z.string().nullable(),
    start: DateTime,
    end: DateTime.nullable().describe('null: ongoing'),
    created_at: DateTime,
  })
  .describe('Time tag');

const RFC3339_TIME = z.string().describe('RFC 3339 date-time');

const CreateTagBody = z.object({
  kind: TagKind,
  label: z.string().max(255).nullable().optional().describe('Up to 255 characters'),
  note: z.string().max(4000).nullable().optional().describe('Up to 4,000 characters'),
  start: RFC3339_TIME,
  end: RFC3339_TIME.nullable().optional().describe('Absent or null: ongoing'),
});

export const toTag = (t: TagDoc) => ({ tag_id: t._id, kind: t.kind, label: t.label, note: t.note, start: t.start, end: t.end, created_at: t.created_at });

/** An RFC 3339 date-time (a bare date is not one), as the UTC instant it names. */
function instant(value: string, field: string): string {
  const ms = /[Tt]/.test(value) ? parseTimeParam(value) : null;
  if (ms === null) throw problems.badRequest(`${field} is not an RFC 3339 date-time`);
  return new Date(ms).toISOString();
}

/** Time tags (spec "Time tags", contracts §9): periods the user's data should be read against. */
export const tagsRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.post(
    '/users/:id/tags',
    {
      config: { auth: 'tenant', audit: 'tag.create' },
      schema: {
        summary: 'Tag a period of a user (illness, travel, a training block…)',
        description: 'Idempotency-Key is honoured: the same request with the same key answers the first tag again for 24 hours.',
        tags: ['tags'],
        params: UserParams,
        headers: IdempotencyKeyHeader,
        body: CreateTagBody,
        response: withProblems({ 201: Tag, 409: z.any(), 422: z.any() }),
      },
    },
    async (request, reply) =>
      idempotent(ctx.readStore, request, reply, async (reservation) => {
        const tenantId = request.tenantId!;
        const user = await readableUser(ctx, tenantId, request.params.id);
        const body = request.body;
        const start = instant(body.start, 'start');
        const end = body.end == null ? null : instant(body.end, 'end');
        if (end !== null && end < start) throw problems.badRequest('end is before start');
        // Under an Idempotency-Key the tag id derives from its reservation: a retry finds the same tag.
        const tagId = reservation ? deterministicId('tag', tenantId, reservation.seed) : randomUUID();
        const result = await createTag(ctx.eventStore, {
          tenantId,
          userId: user.id,
          tagId,
          kind: body.kind,
          label: body.label ?? null,
          note: body.note ?? null,
          start,
          end,
          at: new Date().toISOString(),
        });
        await ctx.settle(result.position || undefined, ['time_tags']);
        const tag = await getTag(ctx.readStore, user.id, tagId);
        if (!tag) throw problems.notFound('user not found');
        return { status: 201, body: toTag(tag), resourceUserId: user.id };
      }),
  );

  app.get(
    '/users/:id/tags',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: "A user's time tags overlapping the window, oldest start first",
        description: 'start and end bound the period: a tag is listed when it began before end and had not ended at start; ongoing tags (end null) are included.',
        tags: ['tags'],
        params: UserParams,
        querystring: z.object({ kind: TagKind.optional(), ...WindowQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(Tag) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      const scope = cursorScope('tags', user.id, { kind: q.kind, start: q.start, end: q.end });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listTags(ctx.readStore, { userId: user.id, kind: q.kind, window }, { after, limit: q.limit });
      return { data: page.items.map(toTag), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
