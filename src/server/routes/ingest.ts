import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { Readable, Writable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { UPLOAD_ID } from '../../../commands/ingestion/acceptUpload.js';
import { DEVICE_SLUGS } from '../../sources/registry.js';
import { storeProviderPayload } from '../../processes/etl/storeProviderPayload.js';
import { HttpProblem, problems } from '../problems.js';
import { withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

const MiB = 1024 * 1024;
export const UPLOAD_LIMITS = { compressedBytes: 50 * MiB, decompressedBytes: 512 * MiB } as const;
const SQLITE_MAGIC = Buffer.from('SQLite format 3\u0000', 'latin1');

const Accepted = z
  .object({ upload_id: z.string(), provider: z.string(), bytes: z.number().int(), status: z.literal('accepted') })
  .describe('Upload accepted; normalisation runs as an ETL job');

/**
 * contracts.md §3: device uploads. The payload is checked (format, sizes, a gzip bomb),
 * stored unchanged and durably, recorded by an event, and only then answered with 202; the
 * ETL worker normalises it afterwards.
 */
export const ingestRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  // Bodies arrive as bytes: they are stored exactly as sent, whatever their type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/octet-stream'], { parseAs: 'buffer', bodyLimit: UPLOAD_LIMITS.compressedBytes }, (_req, body, done) =>
    done(null, body),
  );
  // Part counts are checked by the route (400, exactly one part): these limits only stop abuse.
  await app.register(multipart, { limits: { fileSize: UPLOAD_LIMITS.compressedBytes, files: 16, fields: 16, parts: 32 } });

  let inFlight = 0;
  app.addHook('onRequest', async (_request, reply) => {
    if (inFlight >= ctx.config.uploadsInFlight) {
      throw problems.tooManyRequests(`at most ${ctx.config.uploadsInFlight} uploads are processed at once; retry shortly`, 1);
    }
    inFlight++;
    // 'close' fires once, answered or not: a client that goes away mid-body frees its slot too.
    reply.raw.once('close', () => inFlight--);
  });

  app.post(
    '/ingest/:device_slug',
    {
      bodyLimit: UPLOAD_LIMITS.compressedBytes,
      config: { auth: 'user' },
      schema: {
        summary: 'Upload device data (device-a: multipart gzip NDJSON; device-b: JSON; device-c: Gadgetbridge SQLite)',
        tags: ['ingest'],
        params: z.object({ device_slug: z.string() }),
        headers: z.object({ 'upload-id': z.string().optional().describe('Required: 1 to 128 of letters, digits, - _ .') }),
        response: withProblems({ 202: Accepted }, [400, 401, 403, 404, 409, 410, 413, 415, 422, 429]),
      },
    },
    async (request, reply) => {
      const slug = request.params.device_slug;
      if (!DEVICE_SLUGS.includes(slug)) throw problems.notFound(`unknown device provider ${slug}`);
      const principal = request.principal;
      if (principal?.kind !== 'user') throw problems.forbidden('uploads need a user token');
      if (!principal.scopes.includes('upload')) throw problems.forbidden('this token lacks the upload scope');
      const uploadId = request.headers['upload-id'];
      if (typeof uploadId !== 'string' || !UPLOAD_ID.test(uploadId)) {
        throw problems.badRequest('Upload-Id header is required: 1 to 128 of letters, digits, -, _, .');
      }

      const { payload, contentType } = await readPayload(request, slug);
      const result = await storeProviderPayload(ctx, {
        tenantId: principal.tenantId,
        userId: principal.userId,
        provider: slug,
        payloadId: uploadId,
        body: payload,
        contentType,
        tier: 'upload',
        actor: principal.tokenId,
      });
      if (!result.replayed) {
        await ctx.settle(result.position ?? undefined, ['etl_jobs']);
        ctx.etl.kick();
      } else reply.header('idempotent-replayed', 'true');
      return reply.code(202).send({ upload_id: uploadId, provider: slug, bytes: result.accepted.bytes, status: 'accepted' as const });
    },
  );
};

async function readPayload(request: FastifyRequest, slug: string): Promise<{ payload: Buffer; contentType: string }> {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (slug === 'device-a') {
    if (!request.isMultipart()) throw new HttpProblem(415, 'device-a uploads are multipart/form-data with one part named file (application/gzip)');
    let file: Buffer | null = null;
    let parts = 0;
    for await (const part of request.parts()) {
      parts++;
      if (part.type !== 'file' || part.fieldname !== 'file') throw problems.badRequest('the upload must have exactly one part, a file named "file"');
      const mime = part.mimetype.toLowerCase();
      if (mime !== 'application/gzip' && mime !== 'application/x-gzip') throw new HttpProblem(415, 'the file part must be application/gzip');
      file = await part.toBuffer();
    }
    if (parts !== 1 || !file) throw problems.badRequest('the upload must have exactly one part, a file named "file"');
    await checkGzip(file);
    return { payload: file, contentType: 'application/gzip' };
  }
  const body = request.body;
  if (!Buffer.isBuffer(body)) throw new HttpProblem(415, slug === 'device-b' ? 'device-b uploads are application/json' : 'device-c uploads are application/octet-stream');
  if (slug === 'device-b') {
    if (type !== 'application/json') throw new HttpProblem(415, 'device-b uploads are application/json');
    const encoding = String(request.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding === 'gzip') await checkGzip(body);
    else if (encoding !== 'identity') throw new HttpProblem(415, 'Content-Encoding must be gzip or absent');
    return { payload: body, contentType: encoding === 'gzip' ? 'application/json+gzip' : 'application/json' };
  }
  if (type !== 'application/octet-stream') throw new HttpProblem(415, 'device-c uploads are application/octet-stream');
  if (body.length < SQLITE_MAGIC.length || !body.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) {
    throw problems.badRequest('device-c uploads are Gadgetbridge SQLite database exports');
  }
  return { payload: body, contentType: 'application/vnd.sqlite3' };
}

/** Inflates without keeping the output, to refuse a corrupt stream or a gzip bomb before anything is stored. */
async function checkGzip(data: Buffer): Promise<void> {
  let total = 0;
  const counter = new Writable({
    write(chunk: Buffer, _enc, cb) {
      total += chunk.length;
      cb(total > UPLOAD_LIMITS.decompressedBytes ? new HttpProblem(413, 'the upload inflates to more than 512 MiB') : null);
    },
  });
  try {
    await pipeline(Readable.from([data]), createGunzip(), counter);
  } catch (err) {
    if (err instanceof HttpProblem) throw err;
    throw problems.badRequest('the payload is not valid gzip');
  }
}
