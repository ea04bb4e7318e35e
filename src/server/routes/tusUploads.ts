import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { loadProviderDataHead } from '../../../commands/deletions/providerData.js';
import { refusalOf } from '../../../commands/deletions/registerDataWrite.js';
import { UPLOAD_ID } from '../../../commands/ingestion/acceptUpload.js';
import { abandonUpload, receiveUpload } from '../../../commands/ingestion/receiveUpload.js';
import { uploadState, uploadStream, type UploadState } from '../../../commands/ingestion/upload.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { storeProviderPayload } from '../../processes/etl/storeProviderPayload.js';
import { quotaRefusal } from '../../processes/uploads/uploadQuotas.js';
import { creationLockName, uploadLockName, UploadLockLostError, uploadLocksOf, type UploadLock } from '../../processes/uploads/uploadLocks.js';
import { stagingRoot, UploadStaging, UploadTooLongError, type StagingKey } from '../../rawstore/uploadStaging.js';
import { IMPORT_SLUGS } from '../../sources/registry.js';
import { streamHead } from '../../shared/streamHead.js';
import { HttpProblem, problems } from '../problems.js';
import { publicLocation } from '../publicAddress.js';
import { importHeadProblem, SNIFF_BYTES } from './importFormats.js';
import type { RouteOptions } from './routeOptions.js';
import { uploadTimeZoneOf } from './uploadTimeZone.js';
import { requiredBody, type Answer, type OperationDoc } from '../routeAnswers.js';

const TUS_VERSION = '1.0.0';
const OCTETS = 'application/offset+octet-stream';

/** `key base64,key base64` (tus Upload-Metadata); null when malformed. */
export function parseUploadMetadata(header: string | undefined): Record<string, string> | null {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const pair of header.split(',')) {
    const [key, value, extra] = pair.trim().split(' ');
    if (!key || extra !== undefined || Object.hasOwn(out, key)) return null;
    if (value !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) return null;
    out[key] = value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8');
  }
  return out;
}

/** Upload-Offset and Upload-Length (issue 34 §6): decimal digits without sign, exponent, hex or leading zero, at most 2^53 - 1. */
export function strictLength(header: unknown): number | null {
  if (typeof header !== 'string' || !/^(0|[1-9][0-9]{0,15})$/.test(header)) return null;
  const n = Number(header);
  return Number.isSafeInteger(n) ? n : null;
}

/** The tus request headers (documentation: the handlers read them, so a wrong one is the protocol's status, not a schema's 400). */
const tusHeader = (name: string, description: string, schema: Record<string, unknown>) => ({ in: 'header', name, required: true, description, schema });
const TUS_RESUMABLE = tusHeader('Tus-Resumable', 'The protocol version: 1.0.0 (else 412)', { type: 'string', enum: [TUS_VERSION] });
const DIGITS = { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$' };
/** Every tus answer carries Tus-Resumable (the onSend hook below); errors are problem+json. */
const tusAnswers = (answers: Record<number, Answer>, errors: number[]): Record<number, Answer> => {
  const out: Record<number, Answer> = {};
  for (const [status, a] of Object.entries(answers)) out[Number(status)] = { media: [], ...a, headers: ['tus-resumable', ...(a.headers ?? [])] };
  for (const status of errors) out[status] = { headers: status === 412 ? ['tus-resumable', 'tus-version'] : status === 503 ? ['tus-resumable', 'retry-after'] : ['tus-resumable'] };
  return out;
};
const AT_UPLOAD: OperationDoc = { parameters: [TUS_RESUMABLE] };
const DESCRIBED = ['upload-offset', 'upload-length', 'upload-expires', 'cache-control'] as const;

/** tus-js-client and others retry a 423 (tus-node-server answers it for a locked upload); 409 stays the offset mismatch. */
const locked = () => new HttpProblem(423, 'another request is writing to or ending this upload; retry after it');

/**
 * Resumable uploads by the tus 1.0 protocol (contracts §13): core, creation, termination and
 * expiration, at /v1/uploads/tus with a user token holding `upload`. Written here rather than
 * through @tus/server: the contract's creation rules (the Upload-Id names the upload, the same one
 * again answers its Location, another length is 422), the user-token authentication, and staging
 * that is sealed with the user's data key and registered as events would each replace a piece of
 * that library, and the protocol subset is small (looked at again for issue 34: docs/decisions.md).
 * The bytes wait sealed in UploadStaging; the last one stored, the upload is sealed into the raw
 * store and accepted like any upload (§3), on the same upload stream, so its outcome (§12) runs
 * from `receiving` to `done`. Creations count against the quotas of contracts §18; PATCH, DELETE
 * and the acceptance hold the upload's lock in the store (src/processes/uploads/uploadLocks.ts).
 */
export const tusUploadsRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  const staging = new UploadStaging(stagingRoot(ctx.config.dataDir));
  const locks = uploadLocksOf(ctx.readStore, ctx.config.leases);

  app.addContentTypeParser(OCTETS, (_req, payload, done) => done(null, payload));
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('tus-resumable', TUS_VERSION);
    return payload;
  });

  const uploader = (request: FastifyRequest) => {
    const p = request.principal;
    if (p?.kind !== 'user' || !p.scopes.includes('upload')) throw problems.forbidden('resumable uploads need a user token with the upload scope');
    return p;
  };
  const checkVersion = (request: FastifyRequest) => {
    if (request.headers['tus-resumable'] !== TUS_VERSION) throw new HttpProblem(412, `Tus-Resumable must be ${TUS_VERSION}`, { 'tus-version': TUS_VERSION });
  };
  /** The stream of the upload the path names (of the provider data's current generation); 404 for a name no upload can have. */
  const streamOf = async (userId: string, provider: string, uploadId: string) => {
    if (!IMPORT_SLUGS.includes(provider) || !UPLOAD_ID.test(uploadId)) throw problems.notFound('upload not found');
    const { generation } = await loadProviderDataHead(ctx.eventStore, userId, provider);
    return { stream: uploadStream(userId, provider, uploadId, generation), generation };
  };
  /**
   * The upload named by the path, for the token's user; 404 when absent, 410 when abandoned or
   * expired. Only a caller holding the upload's lock (`locked`) abandons an expired one and removes
   * its bytes; HEAD answers 410 and changes nothing (the sweep or the next PATCH/DELETE cleans up).
   */
  const find = async (userId: string, provider: string, uploadId: string, locked = false) => {
    const { stream, generation } = await streamOf(userId, provider, uploadId);
    const { state } = await loadState(ctx.eventStore, stream, uploadState);
    if (!state.receiving) throw problems.notFound('upload not found');
    if (state.abandoned) throw problems.gone('the upload was terminated or expired');
    if (!state.accepted && Date.parse(state.receiving.expires_at) <= Date.now()) {
      if (locked) {
        await abandonUpload(ctx.eventStore, stream, 'expired');
        await staging.remove(userId, stream);
      }
      throw problems.gone('the upload expired before it was complete');
    }
    const dataKey = await ctx.dataKeys.issue({ userId, provider, generation }, state.receiving.tenant_id);
    return { stream, state, key: { key: dataKey.key, keyId: dataKey.keyId } satisfies StagingKey };
  };
  const describe = (reply: FastifyReply, state: UploadState, offset: number) => {
    reply.header('upload-offset', String(offset));
    reply.header('upload-length', String(state.receiving!.bytes));
    reply.header('upload-expires', new Date(state.receiving!.expires_at).toUTCString());
    reply.header('cache-control', 'no-store');
  };

  /**
   * Runs `work` holding the upload's lock, on the upload as it is once the lock is held (a DELETE or
   * a PATCH that held it just before may have ended or completed it); 423 while another holds it.
   */
  const underLock = async <T>(userId: string, provider: string, uploadId: string, work: (found: Awaited<ReturnType<typeof find>>, lock: UploadLock) => Promise<T>): Promise<T> => {
    const { stream } = await streamOf(userId, provider, uploadId);
    const lock = await locks.take(uploadLockName(stream));
    if (!lock) throw locked();
    try {
      return await work(await find(userId, provider, uploadId, true), lock);
    } catch (err) {
      if (err instanceof UploadLockLostError) throw problems.conflict(err.message);
      throw err;
    } finally {
      await lock.release();
    }
  };

  /**
   * The last byte is stored: seal the whole into the raw store and accept it (contracts §3), still
   * holding the upload's lock, so no DELETE ends it meanwhile (and the acceptance itself refuses
   * an upload abandoned, commands/ingestion/acceptUpload.ts).
   */
  const complete = async (userId: string, stream: string, state: UploadState, key: StagingKey, lock: UploadLock) => {
    const r = state.receiving!;
    await lock.confirm();
    const digest = createHash('sha256');
    for await (const chunk of staging.read(userId, stream, key)) digest.update(chunk as Buffer);
    const result = await storeProviderPayload(ctx, {
      tenantId: r.tenant_id,
      userId,
      provider: r.provider,
      payloadId: r.upload_id,
      body: { bytes: r.bytes, sha256: digest.digest('hex'), open: (): Readable => staging.read(userId, stream, key) },
      contentType: 'application/octet-stream',
      tier: 'upload',
      actor: r.token_id,
      timeZone: r.time_zone ?? null,
    });
    await staging.remove(userId, stream);
    if (!result.replayed) {
      await ctx.settle(result.position ?? undefined, ['etl_jobs', 'uploads']);
      ctx.etl.kick();
    }
  };

  /** A PATCH of an upload already complete: its offset is the length, anything else a conflict. */
  const completeAnswer = (reply: FastifyReply, state: UploadState, claimed: number) => {
    const length = state.receiving!.bytes;
    if (claimed !== length) throw problems.conflict(`the upload is complete: its offset is ${length}`);
    describe(reply, state, length);
    return reply.code(204).send();
  };

  /**
   * contracts §12 at the PATCH: the PATCH that brings the upload's first SNIFF_BYTES (or all of a
   * shorter one) has them judged as the declared format before anything of it is stored. Bytes
   * that cannot be it (not a zip for a zip format, not the XML an export.xml starts with…) end the
   * upload: abandoned (`refused`), its staging removed, 422. A client sending smaller PATCHes is
   * judged at the one that completes the head. Answers the body to store, from its first byte.
   */
  const judgedBody = async (userId: string, stream: string, state: UploadState, key: StagingKey, offset: number, body: AsyncIterable<Buffer>) => {
    const window = Math.min(SNIFF_BYTES, state.receiving!.bytes);
    if (offset >= window) return body;
    const { head, rest } = await streamHead(body, window - offset);
    // Too little to judge yet, or more than the upload's length (413 from the staging, as for any PATCH).
    if (offset + head.length < window || offset + head.length > state.receiving!.bytes) return rest;
    const staged: Buffer[] = [];
    if (offset > 0) for await (const chunk of staging.read(userId, stream, key)) staged.push(chunk as Buffer);
    const problem = importHeadProblem(state.receiving!.provider, Buffer.concat([...staged, head]));
    if (!problem) return rest;
    await abandonUpload(ctx.eventStore, stream, 'refused');
    await staging.remove(userId, stream);
    await ctx.settle(undefined, ['uploads']);
    throw problems.unprocessable(`${problem}; the upload was removed`);
  };

  app.options('/uploads/tus', { config: { auth: 'none', cors: true, answers: tusAnswers({ 204: { description: 'What is supported', headers: ['tus-version', 'tus-extension', 'tus-max-size'] } }, []) }, schema: { summary: 'What the resumable upload endpoint supports (tus 1.0 discovery)', tags: ['ingest'] } }, async (_request, reply) => {
    reply.header('tus-version', TUS_VERSION).header('tus-extension', 'creation,termination,expiration').header('tus-max-size', String(ctx.config.importMaxBytes));
    return reply.code(204).send();
  });

  app.post('/uploads/tus', {
    config: {
      auth: 'user',
      answers: tusAnswers(
        {
          201: { description: 'Created: PATCH its bytes to Location', headers: ['location', 'upload-expires'] },
          200: { description: 'The upload this upload_id already names (a retry): its Location', headers: ['location', 'upload-expires', 'idempotent-replayed'] },
        },
        [400, 401, 403, 409, 410, 412, 413, 422, 429, 500, 503, 507],
      ),
      operation: {
        description: 'tus 1.0 creation. 413: longer than IMPORT_MAX_BYTES or over the tenant\'s staged bytes; 429: the user\'s incomplete uploads at TUS_OPEN_PER_USER; 507: the disk below DISK_FREE_FLOOR_BYTES; 422: the same upload_id with another length; 409/410: the provider\'s data being erased / the user being deleted.',
        parameters: [
          TUS_RESUMABLE,
          tusHeader('Upload-Length', 'The whole upload\'s size in bytes: decimal digits, at least 1', DIGITS),
          tusHeader('Upload-Metadata', 'Comma-separated "key base64value" pairs: provider (an import slug) and upload_id (1 to 128 of letters, digits, -, _, .) required', { type: 'string' }),
        ],
      },
    },
    schema: { summary: 'Create a resumable upload (tus 1.0 creation)', tags: ['ingest'] } }, async (request, reply) => {
    const p = uploader(request);
    checkVersion(request);
    const length = strictLength(request.headers['upload-length']);
    if (length === null || length < 1) throw problems.badRequest('Upload-Length is required: the upload\'s size in bytes, decimal digits, at least 1');
    if (length > ctx.config.importMaxBytes) throw new HttpProblem(413, `the upload is larger than the ${ctx.config.importMaxBytes} bytes accepted (IMPORT_MAX_BYTES)`);
    const meta = parseUploadMetadata(request.headers['upload-metadata'] as string | undefined);
    if (!meta) throw problems.badRequest('Upload-Metadata must be comma-separated "key base64value" pairs');
    const provider = meta.provider ?? '';
    if (!IMPORT_SLUGS.includes(provider)) throw problems.badRequest(`Upload-Metadata provider must be one of ${IMPORT_SLUGS.join(', ')}`);
    const uploadId = meta.upload_id ?? '';
    if (!UPLOAD_ID.test(uploadId)) throw problems.badRequest('Upload-Metadata upload_id is required: 1 to 128 of letters, digits, -, _, .');
    const timeZone = uploadTimeZoneOf(meta.tz, 'Upload-Metadata tz');
    const head = await loadProviderDataHead(ctx.eventStore, p.userId, provider);
    const refusal = refusalOf(head);
    if (refusal) throw refusal;
    // The same upload_id again answers the upload it names (or 422) whatever the quotas: nothing new is staged.
    const stream = uploadStream(p.userId, provider, uploadId, head.generation);
    const named = async () => {
      const { state } = await loadState(ctx.eventStore, stream, uploadState);
      return state.accepted !== null || (state.receiving !== null && !state.abandoned);
    };
    // contracts §18: the tenant's creations count and create one at a time across processes.
    let lock: UploadLock | null = null;
    if (!(await named())) {
      lock = await locks.wait(creationLockName(p.tenantId));
      if (!lock) throw new HttpProblem(503, 'other creations of the tenant hold its upload quota; retry shortly', { 'retry-after': '1' });
    }
    try {
      // Created meanwhile by a request like this one (a client's retry): answered, not counted.
      if (lock && !(await named())) {
        const over = await quotaRefusal(ctx.readStore, ctx.config.dataDir, ctx.config.tusQuotas, p, length);
        if (over) throw new HttpProblem(over.status, over.detail);
      }
      const now = new Date();
      const { created, state } = await receiveUpload(ctx.eventStore, {
        tenantId: p.tenantId,
        userId: p.userId,
        tokenId: p.tokenId,
        provider,
        uploadId,
        bytes: length,
        generation: head.generation,
        at: now,
        expiresAt: new Date(now.getTime() + ctx.config.importUploadExpiryHours * 3_600_000),
        timeZone,
      });
      reply.header('location', publicLocation(ctx.config, `/v1/uploads/tus/${provider}/${uploadId}`));
      if (state.receiving) reply.header('upload-expires', new Date(state.receiving.expires_at).toUTCString());
      if (!created) reply.header('idempotent-replayed', 'true');
      // Counted by the next creation only once the read model holds this one: settled under the lock.
      await ctx.settle(undefined, ['uploads']);
      return reply.code(created ? 201 : 200).send();
    } finally {
      await lock?.release();
    }
  });

  // Documented lengths; a name no upload can have stays a 404 (streamOf), as for any unknown upload.
  const Params = z.object({ provider: z.string().describe('The import slug the upload was created for'), upload_id: z.string().describe('1 to 128 of letters, digits, -, _, . (Upload-Metadata upload_id)') });

  app.head('/uploads/tus/:provider/:upload_id', {
    config: {
      auth: 'user',
      swagger: { exposeHeadRoute: true },
      answers: tusAnswers({ 200: { description: 'The stored offset', headers: DESCRIBED } }, [400, 401, 403, 404, 410, 412, 500]),
      operation: AT_UPLOAD,
    },
    schema: { params: Params, summary: 'The offset of a resumable upload (tus 1.0 core)', tags: ['ingest'] },
  }, async (request, reply) => {
    const p = uploader(request);
    checkVersion(request);
    const { stream, state, key } = await find(p.userId, request.params.provider, request.params.upload_id);
    describe(reply, state, state.accepted ? state.receiving!.bytes : await staging.offset(p.userId, stream, key));
    return reply.code(200).send();
  });

  app.patch('/uploads/tus/:provider/:upload_id', {
    config: {
      auth: 'user',
      answers: tusAnswers({ 204: { description: 'Stored: the new offset', headers: DESCRIBED } }, [400, 401, 403, 404, 408, 409, 410, 412, 413, 415, 422, 423, 500]),
      operation: {
        description: '409: Upload-Offset is not the stored offset; 413: past the declared length; 422: the first bytes cannot be the declared format (the upload is removed); 423: another request holds the upload.',
        parameters: [TUS_RESUMABLE, tusHeader('Upload-Offset', 'The offset these bytes start at: the stored offset', DIGITS)],
        ...requiredBody([OCTETS], 'The next bytes of the upload'),
      },
    },
    bodyLimit: Number.MAX_SAFE_INTEGER, schema: { params: Params, summary: 'Append to a resumable upload (tus 1.0 core)', tags: ['ingest'] } }, async (request, reply) => {
    const p = uploader(request);
    checkVersion(request);
    if ((request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() !== OCTETS) throw new HttpProblem(415, `PATCH bodies are ${OCTETS}`);
    const claimed = strictLength(request.headers['upload-offset']);
    if (claimed === null) throw problems.badRequest('Upload-Offset is required: decimal digits, no sign, exponent or leading zero');
    return underLock(p.userId, request.params.provider, request.params.upload_id, async ({ stream, state, key }, lock) => {
      if (state.accepted) return completeAnswer(reply, state, claimed);
      const length = state.receiving!.bytes;
      const offset = await staging.offset(p.userId, stream, key);
      if (claimed !== offset) throw problems.conflict(`Upload-Offset ${claimed} does not match the stored offset ${offset}`);
      const body = await judgedBody(p.userId, stream, state, key, offset, request.body as AsyncIterable<Buffer>);
      let now: number;
      try {
        now = await staging.append(p.userId, stream, key, body, length, lock);
      } catch (err) {
        if (err instanceof UploadTooLongError) throw new HttpProblem(413, err.message);
        throw err;
      }
      if (now === length) await complete(p.userId, stream, state, key, lock);
      describe(reply, state, now);
      return reply.code(204).send();
    });
  });

  app.delete('/uploads/tus/:provider/:upload_id', {
    config: { auth: 'user', answers: tusAnswers({ 204: { description: 'Terminated' } }, [400, 401, 403, 404, 409, 410, 412, 423, 500]), operation: AT_UPLOAD },
    schema: { params: Params, summary: 'Terminate a resumable upload (tus 1.0 termination)', tags: ['ingest'] } }, async (request, reply) => {
    const p = uploader(request);
    checkVersion(request);
    return underLock(p.userId, request.params.provider, request.params.upload_id, async ({ stream }) => {
      await abandonUpload(ctx.eventStore, stream, 'terminated');
      await staging.remove(p.userId, stream);
      await ctx.settle(undefined, ['uploads']);
      return reply.code(204).send();
    });
  });
};
