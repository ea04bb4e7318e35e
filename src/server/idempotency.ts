import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ReadStore } from '../readstore/readStore.js';
import { sha256Hex } from '../shared/secrets.js';
import { problems } from './problems.js';

export const IDEMPOTENCY_COLLECTION = 'idempotency_keys';
const WINDOW_MS = 24 * 60 * 60 * 1000;

type Stored = {
  _id: string;
  tenant_id: string;
  owner: string;
  fingerprint: string;
  status: 'running' | 'done';
  response: { status: number; body: unknown; headers: Record<string, string> } | null;
  /** The user a stored answer created; its record goes when that user is deleted (spec "States: User"). */
  resource_user_id: string | null;
  expires_at: string;
};

export type IdempotentResult = { status: number; body: unknown; headers?: Record<string, string>; resourceUserId?: string | null };

/**
 * Spec "Conventions" 4 and "Errors" 3. The first request with a key reserves it (an atomic
 * insert-if-absent); while it runs, the same key is a 409; once answered, the same request gets
 * the stored answer with `Idempotent-Replayed: true` for 24 hours, and a different request with
 * that key is a 422. Only successful answers are kept, so a refused or failed request can be retried. This is request
 * bookkeeping, not domain state, so it lives beside the read models rather than in the log.
 */
export async function idempotent(
  readStore: ReadStore,
  request: FastifyRequest,
  reply: FastifyReply,
  run: () => Promise<IdempotentResult>,
): Promise<unknown> {
  const key = request.headers['idempotency-key'];
  const send = (r: IdempotentResult) => reply.code(r.status).headers(r.headers ?? {}).send(r.body);
  if (key === undefined) return send(await run());
  if (typeof key !== 'string' || key.length < 1 || key.length > 255) throw problems.badRequest('Idempotency-Key must be 1 to 255 characters');

  const tenantId = request.tenantId ?? 'none';
  const route = `${request.method} ${request.routeOptions.url}`;
  const id = sha256Hex(`${tenantId}\u0000${route}\u0000${key}`);
  const fingerprint = sha256Hex(`${route}\u0000${request.url}\u0000${JSON.stringify(request.body ?? null)}`);
  const owner = randomUUID();
  const now = Date.now();

  let record = await reserve(readStore, { id, tenantId, owner, fingerprint, now });
  if (record.owner !== owner && Date.parse(record.expires_at) <= now) {
    await readStore.applyChanges([{ op: 'delete', collection: IDEMPOTENCY_COLLECTION, id }]);
    record = await reserve(readStore, { id, tenantId, owner, fingerprint, now });
  }
  if (record.owner !== owner) {
    if (record.fingerprint !== fingerprint) throw problems.unprocessable('Idempotency-Key was already used with a different request');
    if (record.status === 'running' || !record.response) throw problems.conflict('a request with this Idempotency-Key is still running');
    return reply
      .code(record.response.status)
      .headers({ ...record.response.headers, 'idempotent-replayed': 'true' })
      .send(record.response.body);
  }

  let result: IdempotentResult;
  try {
    result = await run();
  } catch (err) {
    // A refusal or failure is not kept: the key is free again, and a retry decides afresh.
    await readStore.applyChanges([{ op: 'delete', collection: IDEMPOTENCY_COLLECTION, id }]);
    throw err;
  }
  if (result.status < 500) {
    await readStore.applyChanges([
      {
        op: 'update',
        collection: IDEMPOTENCY_COLLECTION,
        id,
        set: {
          status: 'done',
          response: { status: result.status, body: result.body, headers: result.headers ?? {} },
          resource_user_id: result.resourceUserId ?? null,
        },
      },
    ]);
  } else {
    await readStore.applyChanges([{ op: 'delete', collection: IDEMPOTENCY_COLLECTION, id }]);
  }
  return send(result);
}

async function reserve(readStore: ReadStore, r: { id: string; tenantId: string; owner: string; fingerprint: string; now: number }): Promise<Stored> {
  await readStore.applyChanges([
    {
      op: 'update',
      collection: IDEMPOTENCY_COLLECTION,
      id: r.id,
      upsert: true,
      setOnInsert: {
        tenant_id: r.tenantId,
        owner: r.owner,
        fingerprint: r.fingerprint,
        status: 'running',
        response: null,
        resource_user_id: null,
        expires_at: new Date(r.now + WINDOW_MS).toISOString(),
      },
    },
  ]);
  return (await readStore.get<Stored>(IDEMPOTENCY_COLLECTION, r.id))!;
}

/** Forgets the stored answer that created `userId` (spec "States: User", active → deleting). */
export async function forgetUserCreation(readStore: ReadStore, tenantId: string, userId: string): Promise<void> {
  await readStore.applyChanges([{ op: 'deleteMany', collection: IDEMPOTENCY_COLLECTION, filter: { tenant_id: tenantId, resource_user_id: userId } }]);
}
