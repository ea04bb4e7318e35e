import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { DomainError } from '../../commands/shared/domainError.js';
import type { CollectionSpec, ReadStore } from '../readstore/readStore.js';
import { sha256Hex } from '../shared/secrets.js';
import { HttpProblem, problems } from './problems.js';

export const IDEMPOTENCY_COLLECTION = 'idempotency_keys';
export const IDEMPOTENCY_COLLECTION_SPEC: CollectionSpec = {
  name: IDEMPOTENCY_COLLECTION,
  indexes: [{ fields: [['tenant_id', 1], ['resource_user_id', 1]] }, { fields: [['expires_at', 1]] }],
  // MongoDB drops expired keys itself (a TTL index); purgeExpiredKeys still runs for the embedded store.
  expireAt: 'expires_at',
};
const WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * How long a request holds its key while it runs. A request that crashed (or whose process did)
 * holds it no longer than this: a retry after it takes the reservation over.
 */
export const LEASE_MS = 30_000;
const PURGE_EVERY_MS = 10 * 60_000;

type Stored = {
  _id: string;
  tenant_id: string;
  owner: string;
  fingerprint: string;
  status: 'running' | 'done';
  response: { status: number; body: unknown; headers: Record<string, string> } | null;
  /** The user a stored answer created; its record goes when that user is deleted (spec "States: User"). */
  resource_user_id: string | null;
  /** When the reservation was made: with the key, it names what the request creates (`Reservation.seed`). */
  created_at: string;
  lease_until: string;
  expires_at: string;
};

export type IdempotentResult = { status: number; body: unknown; headers?: Record<string, string>; resourceUserId?: string | null };

/**
 * A request's hold on its key. `seed` is the same for every attempt under one reservation (and
 * differs for the same key once the reservation expired or was forgotten): a handler derives the
 * ids of what it creates from it, so a retry after any failure lands on the same resource
 * instead of creating a second one.
 */
export type Reservation = { seed: string };

/**
 * Spec "Conventions" 4 and "Errors" 3. The first request with a key reserves it (an atomic
 * insert-if-absent) with a lease; while the lease runs, the same key is a 409; once answered,
 * the same request gets the stored answer with `Idempotent-Replayed: true` for 24 hours, and a
 * different request with that key is a 422. A refused request (4xx: nothing was created) frees
 * the key for a corrected retry; a failed one (5xx, a crash) keeps the reservation with its lease
 * released, so the retry runs under the same reservation and creates nothing twice. Taking over
 * an expired lease or an expired key is one compare-and-set on what the request saw (issue 20),
 * so two requests never both take over. This is request bookkeeping, not domain state, so it
 * lives beside the read models rather than in the log.
 */
export async function idempotent(
  readStore: ReadStore,
  request: FastifyRequest,
  reply: FastifyReply,
  run: (reservation: Reservation | null) => Promise<IdempotentResult>,
): Promise<unknown> {
  const key = request.headers['idempotency-key'];
  const send = (r: IdempotentResult) => reply.code(r.status).headers(r.headers ?? {}).send(r.body);
  if (key === undefined) return send(await run(null));
  if (typeof key !== 'string' || key.length < 1 || key.length > 255) throw problems.badRequest('Idempotency-Key must be 1 to 255 characters');

  const tenantId = request.tenantId ?? 'none';
  const route = `${request.method} ${request.routeOptions.url}`;
  const id = sha256Hex(`${tenantId}\u0000${route}\u0000${key}`);
  const fingerprint = sha256Hex(`${route}\u0000${request.url}\u0000${JSON.stringify(request.body ?? null)}`);
  const owner = randomUUID();
  const now = Date.now();

  let record = await reserve(readStore, { id, tenantId, owner, fingerprint, now });
  if (record.owner !== owner && Date.parse(record.expires_at) <= now) {
    // The key's window is over (or a refusal freed it): a new reservation replaces the old record,
    // unless another request replaced it first (then this one goes on against theirs).
    const fresh = reservationFields({ tenantId, owner, fingerprint, now });
    if (await readStore.updateIf(IDEMPOTENCY_COLLECTION, id, { owner: record.owner, expires_at: record.expires_at }, fresh)) record = { _id: id, ...fresh };
    else record = (await readStore.get<Stored>(IDEMPOTENCY_COLLECTION, id)) ?? (await reserve(readStore, { id, tenantId, owner, fingerprint, now }));
  }
  if (record.owner !== owner) {
    if (record.fingerprint !== fingerprint) throw problems.unprocessable('Idempotency-Key was already used with a different request');
    if (record.status === 'done' && record.response) {
      return reply
        .code(record.response.status)
        .headers({ ...record.response.headers, 'idempotent-replayed': 'true' })
        .send(record.response.body);
    }
    if (Date.parse(record.lease_until) > now) throw problems.conflict('a request with this Idempotency-Key is still running');
    // The request that held it failed or died: this one carries on under the same reservation. One
    // conditional write on the holder and lease it saw, so of two take-overs exactly one wins.
    const lease = { owner, lease_until: new Date(now + LEASE_MS).toISOString() };
    const taken = await readStore.updateIf(IDEMPOTENCY_COLLECTION, id, { owner: record.owner, status: 'running', lease_until: record.lease_until }, lease);
    if (!taken) throw problems.conflict('a request with this Idempotency-Key is still running');
    record = { ...record, ...lease };
  }

  // Every later write is fenced by the holder: a request whose lease was taken over writes nothing.
  const mine = { owner };
  const release = () => readStore.updateIf(IDEMPOTENCY_COLLECTION, id, mine, { lease_until: new Date(0).toISOString() });
  let result: IdempotentResult;
  try {
    result = await run({ seed: `${id}\u0000${record.created_at}` });
  } catch (err) {
    // Refused: nothing was created, and a corrected request may use the key (its record reads as
    // expired, so the next request replaces it). Failed: keep the reservation (what the request
    // may have created is named by it), free for the retry at once.
    if (isRefusal(err)) await readStore.updateIf(IDEMPOTENCY_COLLECTION, id, mine, { lease_until: new Date(0).toISOString(), expires_at: new Date(0).toISOString() });
    else await release();
    throw err;
  }
  if (result.status < 500) {
    await readStore.updateIf(IDEMPOTENCY_COLLECTION, id, mine, {
      status: 'done',
      response: { status: result.status, body: result.body, headers: result.headers ?? {} },
      resource_user_id: result.resourceUserId ?? null,
    });
  } else {
    await release();
  }
  return send(result);
}

function isRefusal(err: unknown): boolean {
  if (err instanceof DomainError || err instanceof ZodError) return true;
  return err instanceof HttpProblem && err.status >= 400 && err.status < 500;
}

/** A new reservation's fields: held by `owner` for LEASE_MS, its answer kept for the 24-hour window. */
function reservationFields(r: { tenantId: string; owner: string; fingerprint: string; now: number }): Omit<Stored, '_id'> {
  return {
    tenant_id: r.tenantId,
    owner: r.owner,
    fingerprint: r.fingerprint,
    status: 'running',
    response: null,
    resource_user_id: null,
    created_at: new Date(r.now).toISOString(),
    lease_until: new Date(r.now + LEASE_MS).toISOString(),
    expires_at: new Date(r.now + WINDOW_MS).toISOString(),
  };
}

/** Inserts the reservation unless the key has a record (an atomic insert-if-absent); answers the record as stored. */
async function reserve(readStore: ReadStore, r: { id: string; tenantId: string; owner: string; fingerprint: string; now: number }): Promise<Stored> {
  await readStore.applyChanges([{ op: 'update', collection: IDEMPOTENCY_COLLECTION, id: r.id, upsert: true, setOnInsert: reservationFields(r) }]);
  return (await readStore.get<Stored>(IDEMPOTENCY_COLLECTION, r.id))!;
}

/** Forgets the stored answer that created `userId` (spec "States: User", active → deleting). */
export async function forgetUserCreation(readStore: ReadStore, tenantId: string, userId: string): Promise<void> {
  await readStore.applyChanges([{ op: 'deleteMany', collection: IDEMPOTENCY_COLLECTION, filter: { tenant_id: tenantId, resource_user_id: userId } }]);
}

/** Removes the records of keys whose 24 hours are over (a key is free again once expired anyway). */
export async function purgeExpiredKeys(readStore: ReadStore, now = Date.now()): Promise<void> {
  await readStore.applyChanges([{ op: 'deleteMany', collection: IDEMPOTENCY_COLLECTION, filter: { expires_at: { $lte: new Date(now).toISOString() } } }]);
}

/** Declares the key store and purges expired keys at start and every ten minutes while the server runs. */
export async function idempotencyStore(app: FastifyInstance, readStore: ReadStore, everyMs = PURGE_EVERY_MS): Promise<void> {
  await readStore.ensureCollections([IDEMPOTENCY_COLLECTION_SPEC]);
  await purgeExpiredKeys(readStore);
  const timer = setInterval(() => void purgeExpiredKeys(readStore).catch((err: unknown) => app.log.warn({ err }, 'purging expired idempotency keys failed')), everyMs);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}
