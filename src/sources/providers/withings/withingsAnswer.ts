import { ProviderCallError } from '../../shared/oauthClient.js';
import { isObject, RecordError, type Json } from '../../shared/connectorRecords.js';

/**
 * Withings answers every call with HTTP 200 and `{status, body}`; a non-zero status is the error.
 * The statuses the public API documents fall in three groups the sync engine acts on differently:
 * the grant no longer works (consent again), the application's rate limit, and Withings' own
 * trouble. Anything else (invalid parameters, an unknown action) is a fault of the request.
 */
const REFUSED = new Set([100, 101, 102, 200, 214, 277, 283, 401]);
const RATE_LIMITED = 601;
const UNAVAILABLE = new Set([522, 2555]);

/** Throws the error a non-zero status stands for; answers `body` of a successful answer. */
export function withingsBody(answer: unknown, what: string): Json {
  if (!isObject(answer) || typeof answer.status !== 'number') {
    throw new ProviderCallError('unavailable', `Withings ${what}: the answer is not {status, body}`);
  }
  const status = answer.status;
  const detail = typeof answer.error === 'string' ? `: ${answer.error.slice(0, 200)}` : '';
  if (status === 0) {
    if (!isObject(answer.body)) throw new ProviderCallError('unavailable', `Withings ${what}: status 0 without a body`);
    return answer.body;
  }
  if (REFUSED.has(status)) throw new ProviderCallError('refused', `Withings refused ${what} (status ${status})${detail}`);
  if (status === RATE_LIMITED) throw new ProviderCallError('rate_limited', `Withings rate limit on ${what} (status 601)`, 60);
  if (UNAVAILABLE.has(status)) throw new ProviderCallError('unavailable', `Withings could not answer ${what} (status ${status})${detail}`);
  throw new ProviderCallError('rejected', `Withings refused the request ${what} as malformed (status ${status})${detail}`);
}

/** The decoder's side: a stored answer's body, or a RecordError naming why it holds nothing to decode. */
export function storedBody(answer: unknown): Json {
  if (!isObject(answer) || typeof answer.status !== 'number') throw new RecordError('the answer is not {status, body}');
  if (answer.status !== 0) throw new RecordError(`the answer carries Withings status ${answer.status}`);
  if (!isObject(answer.body)) throw new RecordError('the answer has no body');
  return answer.body;
}

/** Withings' instants: Unix time in seconds. */
export function epochSeconds(v: unknown, field: string): number {
  if (v === undefined || v === null) throw new RecordError(`${field} is missing`);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 4_102_444_800) throw new RecordError(`${field} ${JSON.stringify(v)} is not a Unix time in seconds`);
  return v * 1000;
}

/** `value × 10^unit`, Withings' way of sending a decimal as two integers, without float noise. */
export function scaled(value: unknown, unit: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new RecordError(`${field}.value is not a number`);
  if (typeof unit !== 'number' || !Number.isInteger(unit) || Math.abs(unit) > 12) throw new RecordError(`${field}.unit is not a power of ten`);
  return Number((value * 10 ** unit).toPrecision(12));
}
