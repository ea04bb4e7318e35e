import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { ZodError } from 'zod';
import { DomainError, type DomainErrorCode } from '../../commands/shared/domainError.js';
import { InvalidCursorError } from '../shared/cursor.js';
import { InvalidTimeWindowError } from '../shared/timeWindow.js';
import { HttpProblem, sendProblem } from './problems.js';

const DOMAIN_STATUS: Record<DomainErrorCode, number> = { not_found: 404, conflict: 409, gone: 410, invalid: 400, forbidden: 403, unprocessable: 422 };

/**
 * Every error leaves as RFC 9457 problem+json. Known failures say what was wrong; anything
 * unexpected is logged here and answered with a bare 500 that leaks nothing.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpProblem) return sendProblem(request, reply, error.status, error.detail, error.headers);
    if (error instanceof DomainError) return sendProblem(request, reply, DOMAIN_STATUS[error.code], error.message);
    if (error instanceof InvalidCursorError) return sendProblem(request, reply, 400, `invalid cursor: ${error.message}`);
    if (error instanceof InvalidTimeWindowError) return sendProblem(request, reply, 400, error.message);
    if (hasZodFastifySchemaValidationErrors(error)) {
      const where = error.validationContext ?? 'request';
      const detail = error.validation.map((v) => `${where}${v.instancePath ? v.instancePath.replace(/\//g, '.') : ''}: ${v.message}`).join('; ');
      return sendProblem(request, reply, 400, detail);
    }
    if (error instanceof ZodError) {
      return sendProblem(request, reply, 400, error.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; '));
    }
    if (isResponseSerializationError(error)) {
      request.log.error({ err: error }, 'response did not match its schema');
      return sendProblem(request, reply, 500, 'internal error');
    }
    const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendProblem(request, reply, 413, `the request body is larger than this route accepts (${request.routeOptions.bodyLimit} bytes)`);
    }
    if (status >= 400 && status < 500) {
      // fastify's own client errors (bad JSON, wrong media type, body too large) carry safe messages.
      return sendProblem(request, reply, status, error.message);
    }
    // The request stream is destroyed once its body was read whole (Node ends a readable that
    // way): that says nothing of the client, who is still waiting for the answer. Only a closed
    // connection does.
    if (request.raw.socket?.destroyed || reply.raw.destroyed || (error as { code?: string }).code === 'ECONNRESET') {
      // The client went away mid-request: nobody is there to answer, and nothing failed here.
      request.log.info({ code: (error as { code?: string }).code }, 'client closed the connection');
      return reply;
    }
    request.log.error({ err: error }, 'unexpected failure');
    return sendProblem(request, reply, 500, 'internal error');
  });

  app.setNotFoundHandler((request, reply) => sendProblem(request, reply, 404, `no route ${request.method} ${request.url.split('?')[0]}`));
}
