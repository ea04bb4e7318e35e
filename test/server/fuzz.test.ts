import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { startTestApp, type TenantHandle, type TestApp, type UserBody } from '../support/server.js';

/**
 * Issue 13 "Errors at the edges": every operation of /openapi.yaml, called with malformed,
 * oversized, wrong-typed and boundary values and with wrong credentials, never answers a 5xx;
 * every error is RFC 9457 problem+json with a request id (the FHIR view's are OperationOutcomes,
 * contracts §10; the agent interface's transport refusals JSON-RPC errors); a refused request
 * changes nothing in the event store beyond its audit entry.
 * Seeded, so a failure reproduces.
 */

type Operation = { method: string; path: string; params: { name: string; in: string }[]; hasBody: boolean };
type Doc = { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: unknown }>> };

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** Pages a person's browser lands on (the end of a provider's consent flow, the hosted connect page): their errors are pages too. */
const BROWSER_PAGES = /^\/(oauth|connect)\//;
/** The agent interface speaks JSON-RPC (MCP Streamable HTTP): its transport refusals are JSON-RPC error objects. */
const JSON_RPC = /^\/mcp$/;
const RUNS_PER_OPERATION = 30;

let t: TestApp;
let a: TenantHandle;
let b: TenantHandle;
let userA: UserBody;
let userB: UserBody;
let tokenA: string;
let operations: Operation[];

beforeAll(async () => {
  t = await startTestApp();
  // No delivery leaves the machine whatever endpoints the calls create.
  await t.ctx.webhooks.stop();
  a = await t.createTenant('fuzz-a');
  b = await t.createTenant('fuzz-b');
  userA = await t.createUser(a.apiKey, { external_ref: 'fuzz-a-user' });
  userB = await t.createUser(b.apiKey, { external_ref: 'fuzz-b-user' });
  tokenA = (await t.mintToken(a.apiKey, userA.id, { scopes: ['read', 'upload'] })).token;
  const doc = parse((await t.call('GET', '/openapi.yaml')).body) as Doc;
  operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, params: op.parameters ?? [], hasBody: op.requestBody !== undefined || method !== 'get' })),
  );
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.integer().map(String),
  fc.constantFrom('', '0', '-1', '1001', '1e309', 'NaN', 'true', 'null', '[]', '{}', '2026-02-30', '2026-13-01T00:00:00Z', '9999-12-31', '../../etc/passwd', '%00', '\u0000', 'ü🙂'),
  fc.constantFrom('x'.repeat(300), '9'.repeat(40), randomUUID()),
);

function pathValue(name: string) {
  if (name === 'id') return fc.oneof(fc.constantFrom(userA.id, userB.id, randomUUID()), nasty);
  if (name === 'tenant_id') return fc.oneof(fc.constantFrom(a.id, b.id, randomUUID()), nasty);
  return fc.oneof(fc.constantFrom('1', '0', randomUUID(), 'device-a', 'oura', 'garmin'), nasty);
}

/** Mostly a credential some route takes, so the calls get past authentication and reach validation. */
const credential = () =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom<string | null>(null, 'garbage', 'Bearer', `svc_sk_${'A'.repeat(43)}`, `svc_ut_${'A'.repeat(43)}`, b.apiKey) },
    { weight: 3, arbitrary: fc.constant(a.apiKey) },
    { weight: 2, arbitrary: fc.constant(t.adminKey) },
    { weight: 1, arbitrary: fc.constant(tokenA) },
  );

const body = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => ({ json: v })) },
  { weight: 2, arbitrary: fc.dictionary(fc.constantFrom('url', 'external_ref', 'kind', 'start', 'end', 'days', 'persona', 'scopes', 'priorities', 'keys', 'event_types', 'enabled', 'since'), fc.oneof(fc.jsonValue({ maxDepth: 2 }), nasty)).map((v) => ({ json: v as unknown })) },
  { weight: 1, arbitrary: fc.constantFrom({ raw: '{"a":', type: 'application/json' }, { raw: 'not json', type: 'text/plain' }, { raw: 'x'.repeat(2 * 1024 * 1024), type: 'application/json' }, { raw: '', type: 'application/xml' }) },
);

/** Events a call appended, other than its audit entry and the background work of earlier calls. */
async function writesAfter(position: number): Promise<RecordedEvent[]> {
  const events = await t.ctx.eventStore.readAll({ after: position });
  return events.filter((e) => !e.type.startsWith('audit.') && !e.streamName.startsWith('deletion-') && !e.type.startsWith('etl.') && !e.type.includes('ingested'));
}

describe('fuzzing every operation of /openapi.yaml (Errors 1; issue 13 "Errors at the edges")', () => {
  it('the document lists the operations walked below', () => {
    expect(operations.length).toBeGreaterThan(40);
  });

  it('never answers a 5xx; every error is problem+json with a request id; a refused call writes nothing', async () => {
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (const op of operations) {
      const query = op.params.filter((p) => p.in === 'query');
      const pathParams = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      const request = fc.record({
        path: fc.tuple(...pathParams.map(pathValue), fc.constant('')),
        query: fc.tuple(...query.map(() => fc.option(nasty, { nil: undefined })), fc.constant(undefined)),
        extraQuery: fc.option(fc.tuple(fc.string({ maxLength: 10 }), nasty), { nil: undefined }),
        credential: credential(),
        body: op.hasBody ? fc.option(body, { nil: undefined }) : fc.constant(undefined),
        idempotencyKey: fc.option(fc.oneof(fc.string({ maxLength: 20 }), fc.constant('k'.repeat(300))), { nil: undefined }),
        requestId: fc.option(fc.oneof(fc.string({ maxLength: 20 }), fc.constant('r'.repeat(200))), { nil: undefined }),
        accept: fc.constantFrom(undefined, 'application/json, text/event-stream', 'application/json', '*/*', 'text/html'),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          let url = op.path;
          pathParams.forEach((name, i) => (url = url.replace(`{${name}}`, encodeURIComponent(String(r.path[i])))));
          const qs = new URLSearchParams();
          query.forEach((p, i) => r.query[i] !== undefined && qs.append(p.name, String(r.query[i])));
          if (r.extraQuery) qs.append(r.extraQuery[0], String(r.extraQuery[1]));
          const headers: Record<string, string> = {};
          if (r.credential !== null) headers.authorization = r.credential.startsWith('svc_') ? `Bearer ${r.credential}` : r.credential;
          if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey;
          if (r.requestId !== undefined) headers['x-request-id'] = r.requestId;
          if (r.accept !== undefined) headers.accept = r.accept;
          let payload: string | undefined;
          if (r.body && 'json' in r.body) {
            payload = JSON.stringify(r.body.json) ?? 'null';
            headers['content-type'] = 'application/json';
          } else if (r.body) {
            payload = r.body.raw;
            headers['content-type'] = r.body.type;
          }
          const before = await t.ctx.eventStore.headPosition();
          const res = await t.app.inject({ method: op.method as InjectOptions['method'], url: qs.size ? `${url}?${qs}` : url, headers, payload });
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          const where = `${op.method} ${url}${qs.size ? `?${qs}` : ''} → ${res.statusCode}`;
          if (res.statusCode >= 500) failures.push(`${where}: ${res.body.slice(0, 200)}`);
          if (res.statusCode >= 400) {
            const type = String(res.headers['content-type'] ?? '');
            // Errors fastify raises before a route runs (a path segment over 100 characters: 414) are problems on every route.
            const fhir = op.path.includes('/fhir');
            const page = BROWSER_PAGES.test(op.path);
            const rpc = JSON_RPC.test(op.path) && /^application\/json/.test(type) && (JSON.parse(res.body) as { error?: unknown }).error !== undefined;
            const expected = page ? /^(text\/html|application\/problem\+json)/ : fhir ? /^application\/(fhir\+json|problem\+json)/ : /^application\/problem\+json/;
            if (!expected.test(type) && !rpc) failures.push(`${where}: content-type ${type}`);
            else if (type.startsWith('application/problem+json')) {
              const problem = JSON.parse(res.body) as { request_id?: string; status?: number };
              if (problem.status !== res.statusCode || !problem.request_id || problem.request_id !== res.headers['x-request-id']) failures.push(`${where}: ${res.body.slice(0, 200)}`);
            }
            const writes = await writesAfter(before);
            if (writes.length) failures.push(`${where}: a refused call wrote ${writes.map((e) => e.type).join(', ')}`);
          }
        }),
        { numRuns: RUNS_PER_OPERATION, seed: 13, endOnFailure: true },
      );
    }
    // Most calls must get past authentication, or the walk proves little.
    expect((statuses.get(400) ?? 0) + (statuses.get(404) ?? 0)).toBeGreaterThan(operations.length * 3);
    expect(failures).toEqual([]);
  }, 600_000);
});
