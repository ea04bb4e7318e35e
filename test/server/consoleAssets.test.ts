import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleAssetsDir, consoleRoutes } from '../../src/server/routes/console.js';
import { startTestApp, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';

/** The console's assets on the service's own listener (docs/console.md): served without credentials, locked down, and an honest answer when unbuilt. */
let t: TestApp;
let assets: string;

/** The plugin alone, on a fastify with the service's validation (zod). */
async function consoleOnly(assetsDir: string | null) {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(consoleRoutes, { assetsDir });
  return app;
}

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
    const app = await consoleOnly(assets);
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
    expect(script.headers['cache-control']).toContain('immutable');
    expect(page.headers['cache-control']).toBe('no-cache');
    // Nothing but the build's own files: no other name, no way out of the directory.
    expect((await app.inject({ method: 'GET', url: '/console/assets/missing.js' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/console/assets/..%2Findex.html' })).statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/console/../package.json' })).statusCode).not.toBe(200);
    expect((await app.inject({ method: 'GET', url: '/console/index.html' })).statusCode).toBe(404);
    await app.close();
  });

  it('an unbuilt console answers 404 with a problem saying how to build it', async () => {
    const app = await consoleOnly(null);
    const res = await app.inject({ method: 'GET', url: '/console/' });
    expect(res.statusCode).toBe(404);
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

  it('the service serves the console on its own listener', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console' });
    expect(res.statusCode).toBe(301);
    expect([200, 404]).toContain((await t.app.inject({ method: 'GET', url: '/console/' })).statusCode);
  });
});
