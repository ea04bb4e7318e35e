import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';
import { freePort, npmStartArgs } from '../../bench/support/service.js';

const root = fileURLToPath(new URL('../../', import.meta.url));


type Running = { child: ChildProcess; stdout: () => string; stderr: () => string; base: string };

/** Starts the service the way `npm start` does (scripts/start.mjs: the compiled src/main.ts) and waits until it answers. */
async function start(dataDir: string, port: number): Promise<Running> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' };
  for (const k of ['EVENTSTORE_URL', 'MONGODB_URL', 'ADMIN_API_KEY', 'SEALING_KEY', 'PUBLIC_BASE_URL']) delete env[k];
  const child = spawn(process.execPath, npmStartArgs(), { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const base = `http://127.0.0.1:${port}`;
  const until = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}: ${err}${out}`);
    try {
      const res = await fetch(`${base}/openapi.yaml`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`service did not answer within 20 s: ${err}${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, stdout: () => out, stderr: () => err, base };
}

function stop(r: Running, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    if (r.child.exitCode !== null || r.child.signalCode !== null) return resolve(r.child.exitCode);
    const timer = setTimeout(() => r.child.kill('SIGKILL'), 10_000);
    r.child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    r.child.kill(signal);
  });
}

async function api(base: string, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

describe('running the service as `npm start` does (contracts §1)', () => {
  const dataDir = tempDir('wellstream-start-');
  let port: number;
  let first: Running;
  let second: Running | undefined;
  let firstExit: number | null;
  let adminKey: string;
  let tenant: { id: string; api_key: string };
  let user: { id: string; external_ref: string };

  beforeAll(async () => {
    port = await freePort();
    first = await start(dataDir, port);
    adminKey = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
    const created = await api(first.base, 'POST', '/v1/admin/tenants', adminKey, { name: 'over-http' });
    expect(created.status).toBe(201);
    tenant = created.json as { id: string; api_key: string };
    const u = await api(first.base, 'POST', '/v1/users', tenant.api_key, { external_ref: 'survivor' });
    expect(u.status).toBe(201);
    user = u.json as { id: string; external_ref: string };
    firstExit = await stop(first);
    second = await start(dataDir, port);
  }, 60_000);

  afterAll(async () => {
    if (first) await stop(first, 'SIGKILL');
    if (second) await stop(second, 'SIGKILL');
  });

  it('writes a generated admin key to DATA_DIR/admin.key with mode 0600 (contracts §1: admin key)', () => {
    expect(adminKey).toMatch(/^svc_ak_[0-9A-Za-z]{43}$/);
    expect(statSync(join(dataDir, 'admin.key')).mode & 0o777).toBe(0o600);
  });

  it('prints the generated admin key exactly once on the first start (contracts §1: admin key)', () => {
    expect(first.stdout().split(adminKey).length - 1).toBe(1);
    expect(first.stderr()).not.toContain(adminKey);
  });

  it('does not print the admin key again on a later start (contracts §1: printed once)', () => {
    expect(second!.stdout()).not.toContain(adminKey);
    expect(second!.stderr()).not.toContain(adminKey);
    expect(second!.stdout()).not.toMatch(/svc_ak_[0-9A-Za-z]{43}/);
  });

  it('keeps the same admin key across restarts (contracts §1: admin key)', async () => {
    expect(readFileSync(join(dataDir, 'admin.key'), 'utf8').trim()).toBe(adminKey);
    expect((await api(second!.base, 'GET', `/v1/admin/tenants/${tenant.id}`, adminKey)).status).toBe(200);
  });

  it('never writes a tenant key to its logs (contracts §1: secrets never logged)', () => {
    expect(first.stdout()).not.toContain(tenant.api_key);
    expect(first.stderr()).not.toContain(tenant.api_key);
  });

  it('stops cleanly on SIGTERM (contracts §1)', () => {
    expect(firstExit).toBe(0);
  });

  it('keeps data across a restart: the user and the tenant key still work (contracts §1: data survives restarts)', async () => {
    const got = await api(second!.base, 'GET', `/v1/users/${user.id}`, tenant.api_key);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ id: user.id, external_ref: 'survivor', status: 'active' });
    const dup = await api(second!.base, 'POST', '/v1/users', tenant.api_key, { external_ref: 'survivor' });
    expect(dup.status).toBe(409);
  });

  it('serves problem+json with X-Request-Id over real HTTP (Errors 1; Conventions 3)', async () => {
    const res = await fetch(`${second!.base}/v1/users`, { headers: { 'x-request-id': 'over-http-1' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(res.headers.get('x-request-id')).toBe('over-http-1');
    expect(await res.json()).toMatchObject({ status: 401, request_id: 'over-http-1' });
  });
});
