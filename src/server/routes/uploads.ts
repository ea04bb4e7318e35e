import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getUpload, listUploads } from '../../../queries/ingestion/uploads.js';
import { problems } from '../problems.js';
import { DateTime, pageOf, withProblems } from '../schemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

const STATUSES = ['receiving', 'accepted', 'processing', 'done', 'failed', 'parked'] as const;

export const Upload = z
  .object({
    upload_id: z.string(),
    provider: z.string(),
    bytes: z.number().int().describe('The upload\'s size (a resumable upload: its Upload-Length)'),
    status: z.enum(STATUSES).describe('receiving while a resumable upload is incomplete, then accepted, processing, and done, failed or parked: answered once its records read back in every view, processing until then (contracts §17)'),
    received_at: DateTime,
    started_at: DateTime.nullable(),
    finished_at: DateTime.nullable(),
    progress: z
      .object({ bytes_read: z.number().int(), bytes_total: z.number().int(), records_read: z.number().int() })
      .nullable()
      .describe('While processing: how far its last checkpoint got; null otherwise'),
    records: z.record(z.string(), z.number().int()).describe('Record kind → records stored from this upload'),
    unchanged: z.number().int().describe('Records this upload held that an earlier upload of the provider had stored'),
    rejected: z.number().int().describe('Lines or records that could not be stored, each counted'),
    rejections: z.array(z.object({ at: z.string().describe('1-based line, table and row, or file path in the archive'), reason: z.string() })).describe('The first 20 rejections'),
    error: z.string().nullable().describe('Why it failed or was parked; null otherwise'),
  })
  .describe('Upload');

const UploadParams = z.object({ provider: z.string().min(1).max(64), upload_id: z.string().min(1).max(128) });

/**
 * contracts §12: the outcome of every upload and import. The tenant reads a user's list and one
 * upload; the user's own app reads its uploads with the token it uploads with.
 */
export const uploadsRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/uploads',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: "The user's uploads and imports with their outcome, newest first",
        tags: ['ingest'],
        params: UserParams,
        querystring: z.object({ provider: z.string().min(1).max(64).optional(), status: z.enum(STATUSES).optional(), ...PagingQuery }),
        response: withProblems({ 200: pageOf(Upload) }),
      },
    },
    async (request) => {
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const q = request.query;
      const scope = cursorScope('uploads', user.id, { provider: q.provider ?? null, status: q.status ?? null });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listUploads(ctx.readStore, ctx.recordsApplied, { userId: user.id, ...(q.provider !== undefined ? { provider: q.provider } : {}), ...(q.status !== undefined ? { status: q.status } : {}) }, { after, limit: q.limit });
      return { data: page.items, next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );

  app.get(
    '/users/:id/uploads/:provider/:upload_id',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'One upload or import with its outcome',
        tags: ['ingest'],
        params: UserParams.extend(UploadParams.shape),
        response: withProblems({ 200: Upload }),
      },
    },
    async (request) => {
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const upload = await getUpload(ctx.readStore, ctx.recordsApplied, user.id, request.params.provider, request.params.upload_id);
      if (!upload) throw problems.notFound('upload not found');
      return upload;
    },
  );

  app.get(
    '/me/uploads/:provider/:upload_id',
    {
      config: { auth: 'user' },
      schema: {
        summary: "One of the token's user's uploads, with its outcome",
        description: 'A user token with the `upload` scope (the one the upload was sent with); other tokens 403.',
        tags: ['ingest'],
        params: UploadParams,
        response: withProblems({ 200: Upload }, [401, 403, 404]),
      },
    },
    async (request) => {
      const p = request.principal;
      if (p?.kind !== 'user' || !p.scopes.includes('upload')) throw problems.forbidden('reading an upload needs a user token with the upload scope');
      const upload = await getUpload(ctx.readStore, ctx.recordsApplied, p.userId, request.params.provider, request.params.upload_id);
      if (!upload) throw problems.notFound('upload not found');
      return upload;
    },
  );
};
