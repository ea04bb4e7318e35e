import type { Bundle, OperationOutcome, Patient } from 'fhir/r4.js';
import type { FastifyContextConfig, FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z, ZodError } from 'zod';
import type { UserDoc } from '../../../projections/users/usersProjection.js';
import { capabilityStatement } from '../../fhir/capabilityStatement.js';
import { readObservation, sourcesFor } from '../../fhir/observationSources.js';
import { FhirSearchError, loincCodesOf, windowForDates } from '../../fhir/searchParams.js';
import type { Scalar } from '../../readstore/readStore.js';
import { InvalidCursorError } from '../../shared/cursor.js';
import { HttpProblem } from '../problems.js';
import { FHIR_JSON } from '../routeAnswers.js';
import { publicBaseOf } from '../publicAddress.js';
import { cursorScope, readableUser, UserParams } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

/** The CapabilityStatement's date: what it describes is fixed for the life of the process. */
const PUBLISHED_AT = new Date().toISOString();

const ISSUE_CODE: Record<number, 'invalid' | 'login' | 'forbidden' | 'not-found' | 'not-supported' | 'exception'> = {
  400: 'invalid',
  401: 'login',
  403: 'forbidden',
  404: 'not-found',
  405: 'not-supported',
};

function outcome(status: number, diagnostics: string): OperationOutcome {
  return { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: ISSUE_CODE[status] ?? 'exception', diagnostics }] };
}

const send = (reply: FastifyReply, body: unknown, status = 200) =>
  reply
    .code(status)
    .type(FHIR_JSON)
    .serializer((p: unknown) => JSON.stringify(p))
    .send(body);


const patientOf = (user: UserDoc): Patient => ({
  resourceType: 'Patient',
  id: user.id,
  ...(user.external_ref ? { identifier: [{ system: 'urn:wellstream:external_ref', value: user.external_ref }] } : {}),
  active: true,
});

const SearchQuery = z.object({
  code: z.string().min(1).optional().describe('LOINC code, http://loinc.org|<code>, or a comma list'),
  date: z.union([z.string(), z.array(z.string())]).optional().describe('Repeatable: prefix ge, gt, le, lt or eq, then a date or RFC 3339 time'),
  _count: z.coerce.number().int().min(1).max(1000).default(100).describe('Page size, 1 to 1000 (default 100)'),
  view: z.enum(['merged', 'all']).default('merged'),
  _cursor: z.string().min(1).max(2048).optional().describe('Opaque: from the next link'),
});

/** The FHIR R4 view of one user (contracts §10): application/fhir+json, errors as OperationOutcome. */
export const fhirRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.setErrorHandler((error, request, reply) => {
    let status = 500;
    let message = 'internal error';
    if (error instanceof HttpProblem) {
      status = error.status;
      message = error.detail;
      for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
    } else if (error instanceof FhirSearchError || error instanceof InvalidCursorError || error instanceof ZodError) {
      status = 400;
      message = error instanceof ZodError ? error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') : error.message;
    } else if (typeof (error as { statusCode?: unknown }).statusCode === 'number' && (error as { statusCode: number }).statusCode < 500) {
      status = (error as { statusCode: number }).statusCode;
      message = (error as Error).message;
    } else {
      request.log.error({ err: error }, 'FHIR request failed');
    }
    return send(reply, outcome(status, message), status);
  });

  // Answers and errors alike are FHIR resources (routeAnswers.ts documents them so).
  const config = { auth: 'tenant' as const, errorMedia: FHIR_JSON, answers: { 200: { media: [FHIR_JSON] } } } satisfies FastifyContextConfig;
  const tags = ['fhir'];

  app.get('/users/:id/fhir/metadata', { config, schema: { summary: 'FHIR R4 CapabilityStatement of the view', tags, params: UserParams } }, async (request, reply) => {
    await readableUser(ctx, request.tenantId!, request.params.id);
    return send(reply, capabilityStatement(`${publicBaseOf(ctx.config, request)}/v1/users/${request.params.id}/fhir`, PUBLISHED_AT));
  });

  app.get('/users/:id/fhir/Patient', { config, schema: { summary: 'FHIR Patient search: the one Patient of the user', tags, params: UserParams } }, async (request, reply) => {
    const user = await readableUser(ctx, request.tenantId!, request.params.id);
    const self = `${publicBaseOf(ctx.config, request)}/v1/users/${user.id}/fhir/Patient`;
    const bundle: Bundle = {
      resourceType: 'Bundle',
      type: 'searchset',
      total: 1,
      link: [{ relation: 'self', url: self }],
      entry: [{ fullUrl: `${self}/${user.id}`, resource: patientOf(user), search: { mode: 'match' } }],
    };
    return send(reply, bundle);
  });

  app.get(
    '/users/:id/fhir/Patient/:patient_id',
    { config, schema: { summary: 'FHIR Patient read (the id is the user id)', tags, params: UserParams.extend({ patient_id: z.string() }) } },
    async (request, reply) => {
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      if (request.params.patient_id.toLowerCase() !== user.id) throw new HttpProblem(404, `Patient/${request.params.patient_id} not found`);
      return send(reply, patientOf(user));
    },
  );

  app.get(
    '/users/:id/fhir/Observation',
    { config, schema: { summary: 'FHIR Observation search over quantity samples and sleep sessions', tags, params: UserParams, querystring: SearchQuery } },
    async (request, reply) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const sources = sourcesFor(loincCodesOf(q.code));
      const dates = q.date === undefined ? [] : Array.isArray(q.date) ? q.date : [q.date];
      const window = windowForDates(dates);
      // One cursor over the sources in their fixed order: the source's index, then the keyset within it.
      const scope = cursorScope('fhir-observation', user.id, { code: q.code ?? null, date: dates, view: q.view });
      const decoded = q._cursor ? cursors.decode(q._cursor, scope) : null;
      let sourceIndex = decoded ? Number(decoded[0]) : 0;
      let after: Scalar[] | null = decoded && decoded.length > 1 ? decoded.slice(1) : null;
      if (!Number.isInteger(sourceIndex) || sourceIndex < 0) throw new InvalidCursorError('malformed cursor');
      const entries: Bundle['entry'] = [];
      let next: Scalar[] | null = null;
      const base = `${publicBaseOf(ctx.config, request)}/v1/users/${user.id}/fhir`;
      const query = { userId: user.id, window, view: q.view };
      while (sourceIndex < sources.length && entries.length < q._count) {
        const page = await sources[sourceIndex]!.list(ctx.readStore, query, { after, limit: q._count - entries.length });
        for (const resource of page.items) {
          entries.push({ fullUrl: `${base}/Observation/${resource.id}`, resource, search: { mode: 'match' } });
        }
        if (page.next) {
          next = [sourceIndex, ...page.next];
          break;
        }
        sourceIndex += 1;
        after = null;
      }
      // A page that filled up exactly as a source ended: a next link only if a later source has a record.
      if (next === null && entries.length === q._count) {
        for (; sourceIndex < sources.length; sourceIndex += 1) {
          const probe = await sources[sourceIndex]!.list(ctx.readStore, query, { limit: 1 });
          if (probe.items.length) {
            next = [sourceIndex];
            break;
          }
        }
      }
      const params = new URLSearchParams();
      if (q.code !== undefined) params.set('code', q.code);
      for (const d of dates) params.append('date', d);
      params.set('_count', String(q._count));
      params.set('view', q.view);
      const self = new URLSearchParams(params);
      if (q._cursor) self.set('_cursor', q._cursor);
      const link: Bundle['link'] = [{ relation: 'self', url: `${base}/Observation?${self.toString()}` }];
      if (next) {
        params.set('_cursor', cursors.encode(next, scope));
        link.push({ relation: 'next', url: `${base}/Observation?${params.toString()}` });
      }
      const bundle: Bundle = { resourceType: 'Bundle', type: 'searchset', link, ...(entries.length ? { entry: entries } : {}) };
      return send(reply, bundle);
    },
  );

  app.get(
    '/users/:id/fhir/Observation/:observation_id',
    { config, schema: { summary: 'FHIR Observation read', tags, params: UserParams.extend({ observation_id: z.string() }) } },
    async (request, reply) => {
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const observation = await readObservation(ctx.readStore, user.id, request.params.observation_id);
      if (!observation) throw new HttpProblem(404, `Observation/${request.params.observation_id} not found`);
      return send(reply, observation);
    },
  );
};
