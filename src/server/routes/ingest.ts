import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { UPLOAD_ID } from '../../../commands/ingestion/acceptUpload.js';
import { storeProviderPayload } from '../../processes/etl/storeProviderPayload.js';
import type { Principal } from '../auth.js';
import { addEtlBackPressure } from '../etlBackPressure.js';
import { InFlightSlots } from '../inFlightSlots.js';
import { problems } from '../problems.js';
import { withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';
import { uploadTimeZoneOf } from './uploadTimeZone.js';
import { requiredBody } from '../routeAnswers.js';
import { IMPORT_UPLOAD_FORMATS } from './importFormats.js';
import { mediaTypeOf, takesType, unsupportedMediaType, unsupportedPartType, UPLOAD_FORMATS, UPLOAD_LIMITS, type JudgedBody, type UploadFormat } from './uploadFormats.js';

const Accepted = z
  .object({ upload_id: z.string(), provider: z.string(), bytes: z.number().int(), status: z.literal('accepted') })
  .describe('Upload accepted; normalisation runs as an ETL job');

/**
 * contracts.md §3: device uploads. The payload is checked (format, sizes, a gzip bomb),
 * stored unchanged and durably, recorded by an event, and only then answered with 202; the
 * ETL worker normalises it afterwards.
 */
export const ingestRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  // Bodies arrive as bytes: they are stored exactly as sent, whatever their type. Which types a
  // route takes is decided before a byte is read (preParsing below), so this takes the rest.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: UPLOAD_LIMITS.compressedBytes }, (_req, body, done) => done(null, body));
  // Part counts are checked by the route (400, exactly one part): these limits only stop abuse.
  await app.register(multipart, { limits: { fileSize: UPLOAD_LIMITS.compressedBytes, files: 16, fields: 16, parts: 32 } });

  // After the credential (auth.ts runs first: the tenant is known, a refused token never takes a
  // slot) and before the body: per instance and per tenant (contracts §18).
  const slots = new InFlightSlots(ctx.config.uploadsInFlight, ctx.config.uploadsInFlightPerTenant);
  app.addHook('onRequest', async (request, reply) => {
    const p = request.principal;
    if (p?.kind !== 'user') return;
    const slot = slots.take(p.tenantId, p.userId);
    if (slot === 'tenant_full') throw problems.tooManyRequests(`at most ${slots.perTenant} uploads of one tenant are processed at once; retry shortly`, 1);
    if (slot !== 'taken') throw problems.tooManyRequests(`at most ${slots.limit} uploads are processed at once; retry shortly`, 1);
    // 'close' fires once, answered or not: a client that goes away mid-body, or a body that
    // stalled (408, connection closed), frees its slot too.
    reply.raw.once('close', () => slots.release(p.tenantId, p.userId));
  });

  // An unknown slug or a type its format does not take is answered before the body is read.
  app.addHook('preParsing', async (request, _reply, payload) => {
    const slug = (request.params as { device_slug?: string }).device_slug ?? '';
    const format = UPLOAD_FORMATS[slug];
    if (!format) throw problems.unknownSlug('upload slug', slug, Object.keys(UPLOAD_FORMATS));
    const type = mediaTypeOf(request.headers['content-type']);
    if (!takesType(format, type)) throw unsupportedMediaType(slug, format, type, ctx.config.publicBaseUrl);
    uploadTimeZoneOf(request.headers['upload-time-zone'], 'Upload-Time-Zone');
    return payload;
  });
  // Then, still before the body is read: 429 while the ETL queue is full (for everyone or this user).
  addEtlBackPressure(app, ctx, ctx.config.etlBacklog);

  // The body is read raw and judged by its slug (uploadFormats.ts): the document lists every media type some slug takes.
  const bodyTypes = new Set(Object.values(UPLOAD_FORMATS).flatMap((f) => [...f.rawTypes, ...(f.multipart ? ['multipart/form-data'] : [])]));
  const INGEST_BODY = requiredBody([...bodyTypes], 'The upload, as its slug takes it (a 415 lists the types of a slug)');
  const UPLOAD_ID_RULE = 'Upload-Id header is required: 1 to 128 of letters, digits, -, _, .';
  app.post(
    '/ingest/:device_slug',
    {
      bodyLimit: UPLOAD_LIMITS.compressedBytes,
      config: { auth: 'user', scope: 'upload', bodyDeadlineMs: ctx.config.uploadBodyDeadlineMs, operation: INGEST_BODY },
      schema: {
        summary: 'Upload device data or a native export (device-a: gzip NDJSON, multipart or raw; device-b: Health Connect JSON; device-c: Gadgetbridge SQLite; apple-health, health-connect, fitbit-takeout, samsung-health: the export up to 50 MiB; dexcom-clarity: the Clarity CSV export up to 50 MiB, text/csv; fit: a .fit file or a zip of them)',
        description: 'Each slug takes the content types a client would send for its format and judges the body by its first bytes; 415 lists them with a curl line (docs/formats/uploads.md).',
        tags: ['ingest'],
        params: z.object({ device_slug: z.string().describe(`One of ${Object.keys(UPLOAD_FORMATS).join(', ')} (another is a 404 that names them)`) }),
        headers: z.object({
          'upload-id': z.string({ error: UPLOAD_ID_RULE }).regex(UPLOAD_ID, UPLOAD_ID_RULE).describe('1 to 128 of letters, digits, - _ .: names the upload'),
          'upload-time-zone': z.string().optional().describe('IANA time zone the export\'s local times are read in, for exports whose times carry no offset (fitbit-takeout, dexcom-clarity); an unknown one is 400 (contracts §17)'),
        }),
        response: withProblems({ 202: Accepted }, [400, 401, 403, 404, 408, 409, 410, 413, 415, 422, 429]),
      },
    },
    async (request, reply) => {
      const slug = request.params.device_slug;
      const format = UPLOAD_FORMATS[slug];
      if (!format) throw problems.unknownSlug('upload slug', slug, Object.keys(UPLOAD_FORMATS));
      // The credential, its kind and its scope were checked before the body was read (auth.ts, contracts §18).
      const principal = request.principal as Extract<Principal, { kind: 'user' }>;
      const uploadId = request.headers['upload-id'];

      const timeZone = uploadTimeZoneOf(request.headers['upload-time-zone'], 'Upload-Time-Zone');

      const { payload, contentType } = await readPayload(request, slug, format, ctx.config.publicBaseUrl);
      const result = await storeProviderPayload(ctx, {
        tenantId: principal.tenantId,
        userId: principal.userId,
        provider: slug,
        payloadId: uploadId,
        body: payload,
        // Imports are read by range (contracts §13): sealed in chunks.
        chunked: Object.hasOwn(IMPORT_UPLOAD_FORMATS, slug),
        contentType,
        tier: 'upload',
        actor: principal.tokenId,
        timeZone,
      });
      if (!result.replayed) {
        await ctx.settle(result.position ?? undefined, ['etl_jobs', 'uploads']);
        ctx.etl.kick();
      } else reply.header('idempotent-replayed', 'true');
      return reply.code(202).send({ upload_id: uploadId, provider: slug, bytes: result.accepted.bytes, status: 'accepted' as const });
    },
  );
};

async function readPayload(request: FastifyRequest, slug: string, format: UploadFormat, origin: string): Promise<JudgedBody> {
  const type = mediaTypeOf(request.headers['content-type']);
  if (format.multipart && request.isMultipart()) {
    const { field, partTypes } = format.multipart;
    const shape = `the upload must have exactly one part, a file named "${field}"`;
    let file: Buffer | null = null;
    let fileType = '';
    let parts = 0;
    for await (const part of request.parts()) {
      parts++;
      if (part.type !== 'file' || part.fieldname !== field) throw problems.badRequest(shape);
      const partType = mediaTypeOf(part.mimetype);
      if (!partTypes.includes(partType)) throw unsupportedPartType(slug, format, partType, origin);
      file = await part.toBuffer();
      fileType = partType;
    }
    if (parts !== 1 || !file) throw problems.badRequest(shape);
    return format.judge(file, { type: fileType, contentEncoding: 'identity' });
  }
  const body = request.body;
  // preParsing let only the format's types through; a body-less request has nothing to judge.
  if (!Buffer.isBuffer(body)) throw unsupportedMediaType(slug, format, type, origin);
  const contentEncoding = String(request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  return format.judge(body, { type, contentEncoding });
}
