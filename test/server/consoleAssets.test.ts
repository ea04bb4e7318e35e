import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleAssetsDir, consoleRoutes } from '../../src/server/routes/console.js';
import { startTestApp, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';

/** The console's assets on the service's own listener (docs/console.md): served without credentials, locked down, and an honest answer when unbuilt. */
let t: TestApp;
let assets: string;

beforeAll(async () => {
  // Assets of the shape vite writes; the real build is the browser tests' business.
  assets = tempDir('wellstream-console-');
  mkdirSync(join(assets, 'assets'));
  writeFileSync(join(assets, 'index.html'), '<!doctype html><title>console</title><script type="module" src="/console/assets/app.js"></script>');
  writeFileSync(join(assets, 'assets', 'app.js'), 'export {};');
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('console assets', () => {
  it('/console redirects to /console/; the page and its scripts are served with a same-origin-only policy that forbids framing', async () => {
    const app = Fastify();
    await app.register(consoleRoutes, { assetsDir: assets });
    const bare = await app.inject({ method: 'GET', url: '/console' });
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/console/');
    const page = await app.inject({ method: 'GET', url: '/console/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const script = await app.inject({ method: 'GET', url: '/console/assets/app.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect((await app.inject({ method: 'GET', url: '/console/../package.json' })).statusCode).not.toBe(200);
    await app.close();
  });

  it('an unbuilt console answers 503 with a problem saying how to build it', async () => {
    const app = Fastify();
    await app.register(consoleRoutes, { assetsDir: null });
    const res = await app.inject({ method: 'GET', url: '/console/' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((res.json() as { detail: string }).detail).toContain('npm run build');
    await app.close();
  });

  it('the build is found from the source tree and from the compiled tree (dist/src/server/routes)', () => {
    const root = tempDir('wellstream-layout-');
    writeFileSync(join(root, 'package.json'), '{}');
    mkdirSync(join(root, 'dist', 'console'), { recursive: true });
    mkdirSync(join(root, 'dist', 'src', 'server', 'routes'), { recursive: true });
    mkdirSync(join(root, 'src', 'server', 'routes'), { recursive: true });
    expect(consoleAssetsDir(join(root, 'src', 'server', 'routes'))).toBeNull();
    writeFileSync(join(root, 'dist', 'console', 'index.html'), '');
    expect(consoleAssetsDir(join(root, 'src', 'server', 'routes'))).toBe(join(root, 'dist', 'console'));
    expect(consoleAssetsDir(join(root, 'dist', 'src', 'server', 'routes'))).toBe(join(root, 'dist', 'console'));
  });

  it('the service registers the console on its listener, outside the API description', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console' });
    expect(res.statusCode).toBe(301);
    const spec = await t.app.inject({ method: 'GET', url: '/openapi.yaml' });
    expect(spec.body).not.toContain('/console');
  });
});
