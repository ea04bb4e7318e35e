import type { RouteOptions } from 'fastify';
import { kindsOf } from './auth.js';

/**
 * What a route answers, for the OpenAPI document (contracts §17: the document says what the
 * service does). A route's JSON answers and its own error statuses stay in its zod `response`
 * schema; what zod cannot say is declared in `config.answers` (answers without a JSON body, their
 * headers, other media types) and `config.operation` (request headers and bodies the handler reads
 * itself). The statuses that come from shared code (the credential check, validation, body
 * limits, Idempotency-Key) are added here, from the route's own options, for every route alike.
 */
export type Answer = {
  description?: string;
  /** The body's media types; `[]` for an answer without a body. Unset: JSON for 1xx-3xx, a problem for 4xx-5xx. */
  media?: readonly string[];
  /** Response headers the answer carries (names in HEADERS). */
  headers?: readonly HeaderName[];
};

/** A piece of an OpenAPI operation merged into the generated one (request headers, a raw body). */
export type OperationDoc = { parameters?: Record<string, unknown>[]; requestBody?: Record<string, unknown>; description?: string };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answers beyond the route's zod `response` schema, by status (routeAnswers.ts). */
    answers?: Readonly<Record<number, Answer>>;
    /** Request pieces the route reads without a schema (routeAnswers.ts). */
    operation?: OperationDoc;
    /** The media type of the route's errors when they are not problem+json (FHIR: OperationOutcome). */
    errorMedia?: typeof FHIR_JSON;
  }
}

export const PROBLEM_JSON = 'application/problem+json';
export const FHIR_JSON = 'application/fhir+json';
export const HTML = 'text/html';

/** The response headers the service sends, described once. */
export const HEADERS = {
  location: { description: 'The address of what was created (or where to go)', schema: { type: 'string' } },
  'retry-after': { description: 'Seconds to wait before trying again', schema: { type: 'string', pattern: '^[0-9]+$' } },
  'www-authenticate': { description: 'Bearer', schema: { type: 'string' } },
  allow: { description: 'The methods the address serves', schema: { type: 'string' } },
  'idempotent-replayed': { description: 'true when the answer is the stored one of an earlier request with the same key', schema: { type: 'string', enum: ['true'] } },
  'tus-resumable': { description: 'The tus protocol version: 1.0.0', schema: { type: 'string', enum: ['1.0.0'] } },
  'tus-version': { description: 'The tus versions served: 1.0.0', schema: { type: 'string' } },
  'tus-extension': { description: 'The tus extensions served', schema: { type: 'string' } },
  'tus-max-size': { description: 'The largest upload accepted, in bytes (IMPORT_MAX_BYTES)', schema: { type: 'string', pattern: '^[0-9]+$' } },
  'upload-offset': { description: 'Bytes of the upload stored so far', schema: { type: 'string', pattern: '^[0-9]+$' } },
  'upload-length': { description: "The upload's declared size in bytes", schema: { type: 'string', pattern: '^[0-9]+$' } },
  'upload-expires': { description: 'When an incomplete upload expires (RFC 9110 HTTP-date)', schema: { type: 'string' } },
  'cache-control': { description: 'no-store', schema: { type: 'string' } },
} as const;
export type HeaderName = keyof typeof HEADERS;

/** A body the handler reads itself (raw, signed, streamed): required, in any of `media`. */
export const requiredBody = (media: readonly string[], description: string): OperationDoc => ({
  requestBody: { required: true, description, content: Object.fromEntries(media.map((m) => [m, { schema: {} }])) },
});

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The answers a route gives from shared code, decided by its options alone:
 * - a credential (auth.ts): 401 for a missing or unknown one, 403 for the wrong kind or scope,
 *   and 404 for an admin route's unknown `{tenant_id}`;
 * - input (errorHandler.ts): 400 when a schema or a body is read; a path parameter names
 *   something the caller may not have (an unknown id, another tenant's): 404;
 * - a body (errorHandler.ts, stalledTransfers.ts): 408 when it stalls, 413 over the route's
 *   limit, 415 for a media type it does not parse;
 * - Idempotency-Key (idempotency.ts): 409 while a request with the key runs, 422 for the key
 *   used with another request;
 * - anything unforeseen: 500.
 */
export function sharedAnswers(route: Pick<RouteOptions, 'method' | 'url' | 'config' | 'schema'>): Record<number, Answer> {
  const out: Record<number, Answer> = { 500: {} };
  const methods = [route.method].flat().map(String);
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const kinds = kindsOf(route.config?.auth);
  if (!kinds.includes('none')) {
    out[401] = { headers: ['www-authenticate'] };
    if (kinds.length < 3 || route.config?.scope) out[403] = {};
    if (kinds.includes('admin') && route.url.includes(':tenant_id')) out[404] = {};
  }
  const takesBody = methods.some((m) => BODY_METHODS.has(m));
  if (takesBody || schema.querystring || schema.params || schema.headers || schema.body || route.url.includes(':')) out[400] = {};
  if (route.url.includes(':')) out[404] = {};
  if (takesBody) Object.assign(out, { 408: {}, 413: {}, 415: {} });
  const headerNames = headerSchemaKeys(schema.headers);
  if (headerNames.includes('idempotency-key')) Object.assign(out, { 409: {}, 422: {} });
  return out;
}

/** The header names a zod object schema validates (`shape`), lower-cased. */
function headerSchemaKeys(headers: unknown): string[] {
  const shape = (headers as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape).map((k) => k.toLowerCase()) : [];
}
