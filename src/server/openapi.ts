import { STATUS_CODES } from 'node:http';
import swagger from '@fastify/swagger';
import type { RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { FHIR_JSON, HEADERS, PROBLEM_JSON, sharedAnswers, type Answer } from './routeAnswers.js';

export const API_VERSION = '0.1.0';

type Operation = {
  responses?: Record<string, { description?: string; content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
  parameters?: { in: string; name: string }[];
  requestBody?: unknown;
  description?: string;
  security?: unknown[];
};
type Document = { paths?: Record<string, Record<string, Operation>>; components?: Record<string, Record<string, unknown>> };

const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status', 'detail', 'request_id'],
  properties: {
    type: { type: 'string', const: 'about:blank' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    request_id: { type: 'string' },
  },
};
const OUTCOME_SCHEMA = {
  type: 'object',
  description: 'FHIR R4 OperationOutcome',
  required: ['resourceType', 'issue'],
  properties: {
    resourceType: { type: 'string', const: 'OperationOutcome' },
    issue: {
      type: 'array',
      items: { type: 'object', required: ['severity', 'code'], properties: { severity: { type: 'string' }, code: { type: 'string' }, diagnostics: { type: 'string' } } },
    },
  },
};

/** fastify `/a/:id` ↔ OpenAPI `/a/{id}`. */
export const openapiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/**
 * The OpenAPI 3.1 document is generated from the routes (zod is the single source of truth for
 * their inputs and JSON answers; routeAnswers.ts adds what zod cannot say and what shared code
 * answers), so a route cannot exist without being described. Served at GET /openapi.yaml.
 */
export const openapiPlugin = fp(async (app) => {
  const routes = new Map<string, Pick<RouteOptions, 'method' | 'url' | 'config' | 'schema'>>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.set(`${String(method).toLowerCase()} ${openapiPath(route.url)}`, route);
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Wellstream health data aggregation API',
        version: API_VERSION,
        description: 'Collects end users’ health data from wearables and phones and serves it normalised. Errors are RFC 9457 problem+json (the FHIR view: OperationOutcome as application/fhir+json).',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'svc_sk_ tenant key, svc_ut_ user token or svc_ak_ admin key' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: (document) => describeAnswers((document as { openapiObject: Document }).openapiObject, routes) as never,
  });
  app.get(
    '/openapi.yaml',
    { config: { auth: 'none', answers: { 200: { media: ['application/yaml'] } } }, schema: { summary: 'This API described in OpenAPI 3.1', tags: ['meta'] } },
    async (_request, reply) =>
      reply.type('application/yaml; charset=utf-8').header('access-control-allow-origin', '*').send(app.swagger({ yaml: true })),
  );
});

/**
 * Completes each operation from its route: the answers of shared code and of `config.answers`,
 * every error in its media type (problem+json, or the FHIR view's OperationOutcome), response
 * headers, `security: []` where the route takes no credential, and `config.operation`.
 */
function describeAnswers(doc: Document, routes: Map<string, Pick<RouteOptions, 'method' | 'url' | 'config' | 'schema'>>): Document {
  doc.components = { ...doc.components, schemas: { ...doc.components?.schemas, Problem: PROBLEM_SCHEMA, OperationOutcome: OUTCOME_SCHEMA } };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      const route = routes.get(`${method} ${path}`);
      if (!route) continue;
      const config = route.config ?? {};
      const fhir = config.errorMedia === FHIR_JSON;
      const declared: Record<string, Answer> = { ...sharedAnswers(route), ...config.answers };
      const responses = (op.responses ??= {});
      // A route that declares its answers has no "Default Response" 200 unless it says so.
      if (config.answers && responses['200']?.description === 'Default Response' && !responses['200'].content && !config.answers[200]) delete responses['200'];
      for (const [status, answer] of Object.entries(declared)) {
        const existing = (responses[status] ??= { description: answer.description ?? STATUS_TEXT[status] ?? STATUS_CODES[status] ?? 'Answer' });
        if (answer.description) existing.description = answer.description;
        if (answer.media) {
          existing.content = Object.fromEntries(answer.media.map((m) => [m, existing.content?.[m] ?? {}]));
          if (!answer.media.length) delete existing.content;
        }
        if (answer.headers?.length) existing.headers = { ...existing.headers, ...Object.fromEntries(answer.headers.map((h) => [h, HEADERS[h]])) };
      }
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue;
        // The zod Problem schema came out as application/json: errors leave as problem+json (or what the route declares beside it).
        const declaredMedia = declared[status]?.media ?? [];
        const extra = Object.fromEntries(Object.entries(response.content ?? {}).filter(([m]) => declaredMedia.includes(m)));
        const errors = fhir ? { [FHIR_JSON]: { schema: { $ref: '#/components/schemas/OperationOutcome' } } } : { [PROBLEM_JSON]: { schema: { $ref: '#/components/schemas/Problem' } } };
        response.content = { ...errors, ...extra };
      }
      // swagger's placeholder says nothing: the status's own words, or what this service means by it.
      for (const [status, response] of Object.entries(responses)) if (response.description === 'Default Response') response.description = STATUS_TEXT[status] ?? STATUS_CODES[status] ?? 'Answer';
      if (config.auth === undefined || config.auth === 'none') op.security = [];
      if (config.operation?.parameters) op.parameters = [...(op.parameters ?? []), ...(config.operation.parameters as never[])];
      if (config.operation?.requestBody) op.requestBody = config.operation.requestBody;
      if (config.operation?.description) op.description = config.operation.description;
    }
  }
  // A JSON copy: an object shared by routes (their tags, a tus header) would come out of the YAML
  // as anchors and aliases, which some clients refuse; the document is made once and kept.
  return JSON.parse(JSON.stringify(doc)) as Document;
}

const STATUS_TEXT: Record<string, string> = {
  400: 'Bad request: the input breaks a rule (problem detail names it)',
  401: 'Missing, unknown, revoked or expired credential',
  403: 'A credential of the wrong kind or without the scope',
  404: 'Not found (unknown, or not the caller’s)',
  405: 'Method not served',
  408: 'The request body stalled',
  409: 'Conflict with the current state',
  410: 'Gone',
  412: 'Precondition failed',
  413: 'Too large',
  415: 'Unsupported media type',
  422: 'Understood but cannot be processed',
  423: 'Locked: another request is working on it',
  429: 'Too many: retry later',
  500: 'Internal error',
  503: 'Busy: retry later',
  507: 'Insufficient storage',
};
