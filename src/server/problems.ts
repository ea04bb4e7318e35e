import { STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * An RFC 9457 problem to answer with. Thrown anywhere below a route; the error handler turns
 * it into `application/problem+json` with the request id.
 */
export class HttpProblem extends Error {
  override name = 'HttpProblem';
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

export const problems = {
  badRequest: (detail: string) => new HttpProblem(400, detail),
  unauthorized: (detail = 'missing, unknown or expired credentials') => new HttpProblem(401, detail, { 'www-authenticate': 'Bearer' }),
  forbidden: (detail: string) => new HttpProblem(403, detail),
  notFound: (detail = 'not found') => new HttpProblem(404, detail),
  conflict: (detail: string) => new HttpProblem(409, detail),
  gone: (detail: string) => new HttpProblem(410, detail),
  unprocessable: (detail: string) => new HttpProblem(422, detail),
  tooManyRequests: (detail: string, retryAfterSeconds: number) => new HttpProblem(429, detail, { 'retry-after': String(retryAfterSeconds) }),
  /** contracts §17: a slug the route does not know is a 404 that names the ones it does, so the caller can fix it. */
  unknownSlug: (what: string, slug: string, valid: readonly string[]) => new HttpProblem(404, `unknown ${what} ${slug}: the ${what}s are ${valid.join(', ')}`),
};

export type ProblemBody = { type: 'about:blank'; title: string; status: number; detail: string; request_id: string };

export function problemBody(request: FastifyRequest, status: number, detail: string): ProblemBody {
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, request_id: request.id };
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, status: number, detail: string, headers: Record<string, string> = {}) {
  return reply
    .code(status)
    .headers(headers)
    .type('application/problem+json')
    .serializer((p: unknown) => JSON.stringify(p))
    .send(problemBody(request, status, detail));
}
