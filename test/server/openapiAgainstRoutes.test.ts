import { randomUUID } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse, parseDocument, visit } from 'yaml';
import { probe } from '../support/fastifyProbe.js';
import { expectStatus, startTestApp, type Response, type TenantHandle, type TestApp, type UserBody } from '../support/server.js';

vi.mock('fastify', async (importOriginal) => (await import('../support/fastifyProbe.js')).probedFastify(await importOriginal()));

/**
 * contracts §17 (third bullet): the OpenAPI document says what the service does. The document is
 * held against the running service: its operations are the routes fastify serves, and what the
 * service answers to bad requests of every kind (no credential, the wrong one, bad bodies,
 * unknown ids, another tenant's ids, tus without Tus-Resumable) is a status the document lists
 * for that operation, in the media type it lists for that status.
 */
type Media = Record<string, { schema?: unknown }>;
type Operation = {
  responses: Record<string, { content?: Media; headers?: Record<string, unknown> }>;
  parameters?: { in: string; name: string; required?: boolean; schema?: Record<string, unknown> }[];
  requestBody?: { required?: boolean; content: Media };
  security?: unknown[];
};
type Doc = { paths: Record<string, Record<string, Operation>> };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];
/** Routes that take no tenant key, user token or admin key (contracts §17): they say so with `security: []`. */
const PUBLIC = [/^\/webhooks\//, /^\/inbound\//, /^\/oauth\//, /^\/connect\//, /^\/console/, /^\/openapi\.yaml$/, /^options \/v1\/uploads\/tus$/, /^(get|delete) \/mcp$/];

let t: TestApp;
let doc: Doc;
let yamlText: string;
let a: TenantHandle;
let b: TenantHandle;
let userA: UserBody;
let userB: UserBody;
let tokenA: string;
let bareTokenA: string;
const operations: { method: string; path: string; op: Operation }[] = [];

beforeAll(async () => {
  t = await startTestApp();
  yamlText = (await t.call('GET', '/openapi.yaml')).body;
  doc = parse(yamlText) as Doc;
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) if (METHODS.includes(method)) operations.push({ method, path, op });
  }
  a = await t.createTenant();
  b = await t.createTenant();
  userA = await t.createUser(a.apiKey);
  userB = await t.createUser(b.apiKey);
  tokenA = (await t.mintToken(a.apiKey, userA.id, { scopes: ['upload', 'read', 'connect'] })).token;
  bareTokenA = (await t.mintToken(a.apiKey, userA.id, { scopes: ['connect'] })).token;
});
afterAll(async () => {
  await t?.close();
});

const mediaOf = (res: Response) => String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
const isPublic = (method: string, path: string) => PUBLIC.some((p) => p.test(path) || p.test(`${method} ${path}`));

/** `path` with each `{param}` filled by `fill(param)`. */
const address = (path: string, fill: (param: string) => string) => path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, p: string) => encodeURIComponent(fill(p)));

/**
 * What is wrong with an answer against the document: its status not listed for the operation,
 * or its media type not the one listed for that status (none for an answer without a body).
 */
function mismatch(method: string, path: string, op: Operation, res: Response, what: string): string | null {
  const documented = op.responses[String(res.statusCode)];
  const where = `${method.toUpperCase()} ${path} (${what})`;
  if (!documented) return `${where}: answered ${res.statusCode}, documented ${Object.keys(op.responses).join(',')}`;
  const media = mediaOf(res);
  const listed = Object.keys(documented.content ?? {});
  if (method === 'head' || res.statusCode === 204 || res.statusCode === 304 || (res.rawPayload.length === 0 && !media)) {
    return null;
  }
  if (!listed.includes(media)) return `${where}: ${res.statusCode} answered as ${media || 'no media type'}, documented ${listed.join(',') || 'no body'}`;
  return null;
}

async function sweep(what: string, options: (method: string, path: string, op: Operation) => InjectOptions | null): Promise<string[]> {
  const problems: string[] = [];
  for (const { method, path, op } of operations) {
    const inject = options(method, path, op);
    if (!inject) continue;
    const res = await t.app.inject(inject);
    const wrong = mismatch(method, path, op, res, what);
    if (wrong) problems.push(wrong);
  }
  return problems;
}

const BODY_METHODS = new Set(['post', 'put', 'patch']);
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const withBody = (method: string, headers: Record<string, string>, body: string, type = 'application/json') =>
  BODY_METHODS.has(method) ? { headers: { ...headers, 'content-type': type }, payload: body } : { headers };

describe('the OpenAPI document against the routes fastify serves (contracts §17)', () => {
  it('documents every route the service serves, HEAD of a GET aside (fastify answers it as the GET), and no other', () => {
    const gets = new Set(probe.routes.filter((r) => r.method === 'GET').map((r) => r.url));
    const key = (r: { method: string; url: string }) => `${r.method.toLowerCase()} ${r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
    const served = new Set(probe.routes.map(key));
    const mustDocument = new Set(probe.routes.filter((r) => !(r.method === 'HEAD' && gets.has(r.url))).map(key));
    const documented = new Set(operations.map((o) => `${o.method} ${o.path}`));
    expect(served.size).toBeGreaterThan(100);
    expect([...mustDocument].filter((r) => !documented.has(r)).sort()).toEqual([]);
    expect([...documented].filter((r) => !served.has(r)).sort()).toEqual([]);
  });

  it('is plain YAML without anchors or aliases (some OpenAPI clients refuse them)', () => {
    const aliasesIn = (text: string) => {
      let aliases = 0;
      visit(parseDocument(text), { Alias: () => void (aliases += 1) });
      return aliases;
    };
    expect(aliasesIn('a: &x [1]\nb: *x')).toBe(1);
    expect(aliasesIn(yamlText)).toBe(0);
  });

  it('lists the tus routes with their methods and success statuses: OPTIONS 204 and POST 201 at /v1/uploads/tus; HEAD 200, PATCH 204, DELETE 204 at the upload', () => {
    const tus = doc.paths['/v1/uploads/tus']!;
    const upload = doc.paths['/v1/uploads/tus/{provider}/{upload_id}']!;
    expect(tus.options?.responses['204']?.headers).toHaveProperty('tus-version');
    expect(tus.post?.responses['201']?.headers).toHaveProperty('location');
    expect(tus.post?.parameters?.map((p) => p.name)).toEqual(expect.arrayContaining(['Tus-Resumable', 'Upload-Length', 'Upload-Metadata']));
    expect(upload.head?.responses['200']?.headers).toEqual(expect.objectContaining({ 'upload-offset': expect.anything(), 'upload-length': expect.anything(), 'upload-expires': expect.anything() }));
    expect(upload.patch?.responses['204']?.headers).toHaveProperty('upload-offset');
    expect(Object.keys(upload.patch?.requestBody?.content ?? {})).toEqual(['application/offset+octet-stream']);
    expect(upload.patch?.parameters?.map((p) => p.name)).toEqual(expect.arrayContaining(['Tus-Resumable', 'Upload-Offset']));
    expect(upload.delete?.responses['204']).toBeDefined();
    for (const status of ['409', '410', '412', '413', '415', '422', '423']) expect(upload.patch?.responses[status], `PATCH ${status}`).toBeDefined();
    for (const status of ['412', '413', '429', '507']) expect(tus.post?.responses[status], `POST ${status}`).toBeDefined();
  });

  it('documents every error answer as application/problem+json, the FHIR view’s as application/fhir+json', () => {
    const wrong: string[] = [];
    for (const { method, path, op } of operations) {
      const expected = path.includes('/fhir/') ? 'application/fhir+json' : 'application/problem+json';
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) >= 400 && !Object.keys(response.content ?? {}).includes(expected)) wrong.push(`${method} ${path} ${status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('says `security: []` on exactly the routes that take no credential (provider webhooks, inbound pushes, OAuth and connect pages, the console, this document)', () => {
    const saysPublic = operations.filter((o) => Array.isArray(o.op.security) && o.op.security.length === 0).map((o) => `${o.method} ${o.path}`);
    const expected = operations.filter((o) => isPublic(o.method, o.path)).map((o) => `${o.method} ${o.path}`);
    expect(saysPublic.sort()).toEqual(expected.sort());
  });

  it('answers a documented 401 as problem+json to every credentialed route called without one', async () => {
    const wrong: string[] = [];
    for (const { method, path, op } of operations) {
      if (isPublic(method, path)) continue;
      const res = await t.app.inject({ method: method.toUpperCase() as 'GET', url: address(path, () => randomUUID()) });
      if (res.statusCode !== 401) wrong.push(`${method} ${path}: ${res.statusCode} without a credential`);
      const m = mismatch(method, path, op, res, 'no credential');
      if (m) wrong.push(m);
    }
    expect(wrong).toEqual([]);
  });

  it('documents what every route answers to each kind of credential with unknown ids and a bad body (wrong kind, wrong scope, 404, 400)', async () => {
    const secrets = { tenant: a.apiKey, 'user token': tokenA, 'token without read/upload': bareTokenA, admin: t.adminKey };
    const wrong: string[] = [];
    for (const [kind, secret] of Object.entries(secrets)) {
      wrong.push(
        ...(await sweep(`${kind}, unknown ids, body {"bogus":1}`, (method, path) => ({
          method: method.toUpperCase() as 'GET',
          url: address(path, (p) => (p === 'id' && kind.includes('token') ? userA.id : randomUUID())),
          ...withBody(method, bearer(secret), '{"bogus":1}'),
        }))),
      );
    }
    expect(wrong).toEqual([]);
  });

  it('documents the answers to another tenant’s user ids (404) and to bodies that are not JSON', async () => {
    const wrong = [
      ...(await sweep("another tenant's user", (method, path) =>
        path.includes('{id}') && !path.includes('{tenant_id}') ? { method: method.toUpperCase() as 'GET', url: address(path, (p) => (p === 'id' ? userB.id : randomUUID())), ...withBody(method, bearer(a.apiKey), '{}') } : null,
      )),
      ...(await sweep('a body that is not JSON', (method, path) =>
        BODY_METHODS.has(method) ? { method: method.toUpperCase() as 'GET', url: address(path, () => randomUUID()), ...withBody(method, bearer(a.apiKey), '{not json') } : null,
      )),
      ...(await sweep('an unparsed media type', (method, path) =>
        BODY_METHODS.has(method) ? { method: method.toUpperCase() as 'GET', url: address(path, () => randomUUID()), ...withBody(method, bearer(tokenA), 'x', 'application/x-unheard-of') } : null,
      )),
      ...(await sweep('public routes without anything', (method, path) => (isPublic(method, path) ? { method: method.toUpperCase() as 'GET', url: address(path, () => 'nothing-here') } : null))),
    ];
    expect(wrong).toEqual([]);
  });

  it('documents what every read answers its own caller: a tenant key and a user token on their own user (success answers included)', async () => {
    const wrong: string[] = [];
    for (const [kind, secret] of Object.entries({ tenant: a.apiKey, 'user token': tokenA })) {
      wrong.push(
        ...(await sweep(`${kind}, own user`, (method, path) =>
          method === 'get' && path.includes('{id}') && !path.includes('{tenant_id}') ? { method: 'GET', url: address(path, (p) => (p === 'id' ? userA.id : randomUUID())), headers: bearer(secret) } : null,
        )),
      );
    }
    expect(wrong).toEqual([]);
  });

  it('another tenant’s user is a documented 404 on the user routes', async () => {
    for (const path of ['/v1/users/{id}/sleep', '/v1/users/{id}/uploads', '/v1/users/{id}/fhir/Patient']) {
      const res = await t.call('GET', address(path, () => userB.id), { key: a.apiKey });
      expectStatus(res, 404);
      expect(mismatch('get', path, doc.paths[path]!.get!, res, 'other tenant')).toBeNull();
    }
  });

  it('documents the tus answers without Tus-Resumable (412) and a creation’s 201 with its Location', async () => {
    const tus = doc.paths['/v1/uploads/tus']!.post!;
    const bare = await t.call('POST', '/v1/uploads/tus', { key: tokenA, headers: { 'upload-length': '10' } });
    expectStatus(bare, 412);
    expect(mismatch('post', '/v1/uploads/tus', tus, bare, 'no Tus-Resumable')).toBeNull();
    const meta = `provider ${Buffer.from('apple-health').toString('base64')},upload_id ${Buffer.from('u-1').toString('base64')}`;
    const created = await t.call('POST', '/v1/uploads/tus', { key: tokenA, headers: { 'tus-resumable': '1.0.0', 'upload-length': '10', 'upload-metadata': meta } });
    expectStatus(created, 201);
    for (const h of Object.keys(tus.responses['201']!.headers ?? {})) expect(created.headers[h], h).toBeDefined();
    const at = doc.paths['/v1/uploads/tus/{provider}/{upload_id}']!;
    const head = await t.call('HEAD', '/v1/uploads/tus/apple-health/u-1', { key: tokenA, headers: { 'tus-resumable': '1.0.0' } });
    expectStatus(head, 200);
    for (const h of Object.keys(at.head!.responses['200']!.headers ?? {})) expect(head.headers[h], h).toBeDefined();
    const patchBare = await t.call('PATCH', '/v1/uploads/tus/apple-health/u-1', { key: tokenA, headers: { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, body: 'x' });
    expectStatus(patchBare, 412);
    expect(mismatch('patch', '/v1/uploads/tus/{provider}/{upload_id}', at.patch!, patchBare, 'no Tus-Resumable')).toBeNull();
    const wrongOffset = await t.call('PATCH', '/v1/uploads/tus/apple-health/u-1', { key: tokenA, headers: { 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream', 'upload-offset': '5' }, body: 'x' });
    expectStatus(wrongOffset, 409);
    expect(mismatch('patch', '/v1/uploads/tus/{provider}/{upload_id}', at.patch!, wrongOffset, 'wrong offset')).toBeNull();
    const ended = await t.call('DELETE', '/v1/uploads/tus/apple-health/u-1', { key: tokenA, headers: { 'tus-resumable': '1.0.0' } });
    expectStatus(ended, 204);
    const gone = await t.call('HEAD', '/v1/uploads/tus/apple-health/u-1', { key: tokenA, headers: { 'tus-resumable': '1.0.0' } });
    expectStatus(gone, 410);
    expect(at.head!.responses['410']).toBeDefined();
  });

  it('publishes the input rules the service enforces, and the service enforces what it publishes (Idempotency-Key, start/end, preview type, Upload-Id, provider webhook bodies)', async () => {
    const param = (path: string, method: string, where: string, name: string) => doc.paths[path]![method]!.parameters?.find((p) => p.in === where && p.name === name)?.schema;
    const key = param('/v1/users', 'post', 'header', 'idempotency-key');
    expect(key).toMatchObject({ minLength: 1, maxLength: 255 });
    const start = param('/v1/users/{id}/samples', 'get', 'query', 'start') as { pattern: string };
    expect(new RegExp(start.pattern).test('2026-01-02') && new RegExp(start.pattern).test('2026-01-02T03:04:05Z') && !new RegExp(start.pattern).test('yesterday')).toBe(true);
    const preview = doc.paths['/v1/users/{id}/source-priorities/preview']!.post!.requestBody!.content['application/json']!.schema as { properties: { type: { enum: string[] } } };
    expect(preview.properties.type.enum).toEqual(expect.arrayContaining(['heart_rate', 'step_count']));
    expect(param('/v1/ingest/{device_slug}', 'post', 'header', 'upload-id')).toMatchObject({ pattern: expect.any(String) });
    for (const path of ['/webhooks/fitbit', '/webhooks/oura', '/webhooks/whoop', '/webhooks/google', '/webhooks/strava/{token}', '/webhooks/withings/{token}', '/inbound/{provider}/{secret}']) {
      expect(doc.paths[path]!.post!.requestBody?.required, path).toBe(true);
    }
    // Each rule is the service's: a request breaking it is the documented 400.
    const refused = [
      await t.call('POST', '/v1/users', { key: a.apiKey, headers: { 'idempotency-key': 'k'.repeat(256) }, body: {} }),
      await t.call('GET', `/v1/users/${userA.id}/samples`, { key: a.apiKey, query: { type: 'heart_rate', start: 'yesterday' } }),
      await t.call('POST', `/v1/users/${userA.id}/source-priorities/preview`, { key: a.apiKey, body: { priorities: {}, type: 'no_such_type', start: '2026-01-01', end: '2026-01-02' } }),
    ];
    expect(refused.map((r) => r.statusCode)).toEqual([400, 400, 400]);
    expect(refused.map((r) => mediaOf(r))).toEqual(Array(3).fill('application/problem+json'));
  });
});
