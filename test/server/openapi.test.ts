import { readFileSync } from 'node:fs';
import { validate, compileErrors } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { probe } from '../support/fastifyProbe.js';
import { expectStatus, startTestApp, type Response, type TestApp } from '../support/server.js';

vi.mock('fastify', async (importOriginal) => (await import('../support/fastifyProbe.js')).probedFastify(await importOriginal()));

let t: TestApp;
let res: Response;
type Doc = { openapi: string; info: { version: string; title: string }; paths: Record<string, Record<string, unknown>> };
let doc: Doc;

beforeAll(async () => {
  t = await startTestApp();
  res = await t.call('GET', '/openapi.yaml');
  doc = parse(res.body) as Doc;
});
afterAll(async () => {
  await t?.close();
});

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** fastify `/a/:id/b` ↔ OpenAPI `/a/{id}/b` */
const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('GET /openapi.yaml (Specification route; Versioning)', () => {
  it('answers without credentials (Specification route: no credentials)', () => {
    expectStatus(res, 200);
  });

  it('is readable from any origin: Access-Control-Allow-Origin: * (Specification route)', async () => {
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const cross = await t.call('GET', '/openapi.yaml', { headers: { origin: 'https://elsewhere.example' } });
    expectStatus(cross, 200);
    expect(cross.headers['access-control-allow-origin']).toBe('*');
  });

  it('ignores a bad credential instead of refusing (Specification route: no credentials)', async () => {
    expectStatus(await t.call('GET', '/openapi.yaml', { key: 'svc_sk_nonsense' }), 200);
  });

  it('serves YAML that parses to an OpenAPI 3.1 document (Specification route)', () => {
    expect(String(res.headers['content-type'])).toMatch(/yaml/);
    expect(typeof doc).toBe('object');
    expect(doc.openapi).toMatch(/^3\.1(\.\d+)?$/);
    expect(Object.keys(doc.paths ?? {}).length).toBeGreaterThan(0);
  });

  it('describes the running version 0.1.0, the package version (Versioning 1, 3)', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(doc.info.version).toBe('0.1.0');
    expect(doc.info.version).toBe(pkg.version);
  });

  it('is a valid OpenAPI document for @readme/openapi-parser (Specification route: machine-readable)', async () => {
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('describes every route the server serves, with its method (Specification route; Versioning 3)', () => {
    const served = new Set(probe.routes.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${toOpenApiPath(r.url)}`));
    expect(served.size).toBeGreaterThan(5);
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) if (HTTP_METHODS.includes(method)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    const missing = [...served].filter((r) => !documented.has(r)).sort();
    expect(missing).toEqual([]);
  });

  it('describes only routes the server serves (Specification route; Versioning 3)', () => {
    const stray: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) {
        if (!HTTP_METHODS.includes(method)) continue;
        const url = path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
        if (!t.app.hasRoute({ method: method.toUpperCase() as 'GET', url })) stray.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(stray).toEqual([]);
  });

  it('lists the spec routes built so far (Credentials and users; contracts §2)', () => {
    const expected: [string, string][] = [
      ['post', '/v1/users'],
      ['get', '/v1/users'],
      ['get', '/v1/users/{id}'],
      ['delete', '/v1/users/{id}'],
      ['post', '/v1/users/{id}/tokens'],
      ['get', '/v1/deletions/{job_id}'],
      ['post', '/v1/admin/tenants'],
      ['post', '/v1/admin/tenants/{tenant_id}/api-keys'],
      ['delete', '/v1/admin/tenants/{tenant_id}/api-keys/{key_id}'],
      ['get', '/v1/admin/tenants/{tenant_id}/users/{id}'],
      ['delete', '/v1/admin/tenants/{tenant_id}/users/{id}'],
    ];
    for (const [method, path] of expected) expect(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined();
  });
});
