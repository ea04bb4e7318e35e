import { nextJobId } from './jobIds.js';
import {
  DEFAULT_MAX_ATTEMPTS,
  MAX_ATTEMPTS_LIMIT,
  MAX_CLAIM,
  MAX_ERROR_LENGTH,
  MAX_LEASE_MS,
  MAX_LIST,
  MAX_NAME_LENGTH,
  MAX_PAYLOAD_BYTES,
  type ClaimRequest,
  type Job,
  type Json,
  type NewJob,
} from './workQueue.js';

/**
 * The checks both adapters make before writing: a queue is fed by code, but a payload or a name
 * that slipped through from a request must not grow the store without bound.
 */

const CONTROL = /[\u0000-\u001f\u007f]/;

export function checkName(what: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_NAME_LENGTH || CONTROL.test(value)) {
    throw new RangeError(`${what} must be 1 to ${MAX_NAME_LENGTH} printable characters`);
  }
  return value;
}

function checkInteger(what: string, value: number, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new RangeError(`${what} must be an integer from ${min} to ${max}`);
  return value;
}

/** A time: a non-negative safe integer of milliseconds. */
export function checkTime(what: string, value: number): number {
  return checkInteger(what, value, 0, Number.MAX_SAFE_INTEGER);
}

/** Serialises small JSON, refusing what would not read back equal or is too large. */
export function jsonText(what: string, value: Json | undefined): string {
  const text = JSON.stringify(value ?? null);
  if (text === undefined) throw new RangeError(`${what} must be JSON`);
  if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) throw new RangeError(`${what} is over ${MAX_PAYLOAD_BYTES} bytes: store large data elsewhere and pass a reference`);
  return text;
}

/** Small JSON, as it will read back (undefined members dropped, as JSON drops them). */
export function checkedJson(what: string, value: Json | undefined): Json {
  return JSON.parse(jsonText(what, value)) as Json;
}

const QUOTED = /"(?:[^"\\]|\\.)*"?|'[^']*'?|`[^`]*`?/g;
const WITH_DIGIT = /[^\s,;:()[\]{}]*\d[^\s,;:()[\]{}]*/g;

/**
 * What the queue keeps of an error for an operator (issue 35, contracts §19): its first line, with
 * every quoted span made `"…"` and every word holding a digit made `#`, at most MAX_ERROR_LENGTH
 * characters. Messages quote the input they refuse (a parser's `field "2024-13-01" is not a date`,
 * JSON.stringify of the offending text), and times, amounts and ids are digits: neither outlives
 * the data it was about, as a dead job is kept until an operator acts. What stays is the message's
 * wording, which names the kind of failure.
 */
export function errorText(error: string): string {
  const line = String(error).split(/\r?\n/, 1)[0]!;
  return line.replace(QUOTED, '"…"').replace(WITH_DIGIT, '#').slice(0, MAX_ERROR_LENGTH);
}

/** A new job as both adapters store it (state available, generation 0). */
export function newJob(input: NewJob, now: number): Job {
  checkTime('now', now);
  return {
    id: nextJobId(now),
    kind: checkName('kind', input.kind),
    key: input.key === undefined ? null : checkName('key', input.key),
    lock: input.lock === undefined ? null : checkName('lock', input.lock),
    state: 'available',
    priority: checkInteger('priority', input.priority ?? 0, -1_000_000, 1_000_000),
    runAt: checkTime('runAt', input.runAt ?? now),
    attempts: 0,
    maxAttempts: checkInteger('maxAttempts', input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, 1, MAX_ATTEMPTS_LIMIT),
    tenant: input.tenant === undefined ? null : checkName('tenant', input.tenant),
    user: input.user === undefined ? null : checkName('user', input.user),
    holder: null,
    generation: 0,
    leaseExpiresAt: null,
    payload: checkedJson('payload', input.payload),
    progress: null,
    lastError: null,
    createdAt: now,
    updatedAt: now,
    attemptedAt: null,
    finishedAt: null,
  };
}

export function checkLeaseMs(leaseMs: number): number {
  return checkInteger('leaseMs', leaseMs, 1, MAX_LEASE_MS);
}

export function checkClaim(request: ClaimRequest, now: number): { kinds: string[]; n: number; tenantCap: number | undefined } {
  const kinds = [...new Set(request.kinds.map((k) => checkName('kind', k)))];
  if (kinds.length === 0 || kinds.length > 32) throw new RangeError('claim names 1 to 32 kinds');
  checkName('holder', request.holder);
  checkLeaseMs(request.leaseMs);
  checkTime('now', now);
  const tenantCap = request.tenantCap === undefined ? undefined : checkInteger('tenantCap', request.tenantCap, 1, MAX_LIST);
  return { kinds, n: checkInteger('n', request.n, 1, MAX_CLAIM), tenantCap };
}

export function checkLimit(limit: number | undefined, fallback: number, max = MAX_LIST): number {
  return checkInteger('limit', limit ?? fallback, 1, max);
}

/** Sort order of a claim: priority, due time, id. */
export function claimOrder(a: Pick<Job, 'priority' | 'runAt' | 'id'>, b: Pick<Job, 'priority' | 'runAt' | 'id'>): number {
  return a.priority - b.priority || a.runAt - b.runAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
