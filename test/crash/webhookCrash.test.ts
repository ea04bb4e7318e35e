import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, npmStartArgs } from '../../bench/support/service.js';
import { tempDir } from '../support/tmp.js';
import { Receiver } from '../webhooks/receiver.js';

/**
 * Issue 9 acceptance: "No delivery is lost across a SIGKILL restart". The service runs as
 * `npm start` does, in a child process; it is killed with SIGKILL while deliveries are in flight
 * at the receiver (some answered, some held open, some not sent yet), then started again on the
 * same DATA_DIR. Every event must arrive, verified; a repeat is allowed only for a delivery that
 * had reached the receiver before the kill (at least once; receivers de-duplicate on webhook-id).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const USERS = 40;

type Service = { base: string; child: ChildProcess; exited: Promise<void> };

async function startService(dataDir: string): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, npmStartArgs(), {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'error', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', PROJECTOR_THREAD: 'false' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/openapi.yaml`)).ok) return { base, child, exited };
    } catch {
      /* not listening yet */
    }
    if (Date.now() > until) throw new Error('service did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function call<T>(svc: Service, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${svc.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const running: Service[] = [];
afterAll(async () => {
  for (const s of running) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
});

describe('webhook delivery across a SIGKILL restart (issue 9 acceptance; contracts §5: at least once)', () => {
  it('delivers every event after a restart, repeating only deliveries that had reached the receiver before the kill', async () => {
    const dataDir = tempDir('wellstream-webhook-crash-');
    const r = await Receiver.start();
    r.answer = () => 'hang';
    try {
      const first = await startService(dataDir);
      running.push(first);
      const adminKey = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
      const tenant = await call<{ id: string; api_key: string }>(first, adminKey, 'POST', '/v1/admin/tenants', { name: 'crash' });
      const endpoint = await call<{ id: string; secret: string }>(first, tenant.api_key, 'POST', '/v1/webhooks', { url: r.url('/crash'), event_types: ['user.created'] });
      r.trust('/crash', endpoint.secret);
      const userIds: string[] = [];
      for (let i = 0; i < USERS; i++) userIds.push((await call<{ id: string }>(first, tenant.api_key, 'POST', '/v1/users', {})).id);

      // 16 attempts held open (the per-endpoint bound); answer 8, let 8 more arrive, then kill.
      await r.waitFor(() => r.held === 16);
      r.releaseHanging(8);
      await r.waitFor(() => r.received.length >= 24);
      first.child.kill('SIGKILL');
      await first.exited;
      const beforeKill = new Set(r.received.map((x) => x.headers['webhook-id'] as string));
      r.dropHanging();
      r.answer = () => ({ status: 204 });

      const second = await startService(dataDir);
      running.push(second);
      const unique = () => new Set(r.received.filter((x) => x.verified !== null).map((x) => x.headers['webhook-id'] as string));
      await r.waitFor(() => unique().size === USERS, 30_000);

      expect(r.received.filter((x) => x.verified === null).map((x) => x.verifyError)).toEqual([]);
      const delivered = r.received.map((x) => JSON.parse(x.body) as { id: string; type: string; data: { user_id: string } });
      expect(new Set(delivered.map((d) => d.data.user_id))).toEqual(new Set(userIds));
      expect(delivered.every((d) => d.type === 'user.created')).toBe(true);
      const counts = new Map<string, number>();
      for (const d of delivered) counts.set(d.id, (counts.get(d.id) ?? 0) + 1);
      const repeated = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
      expect(repeated.filter((id) => !beforeKill.has(id))).toEqual([]);

      // The service's own account agrees: one delivery per event, each done.
      let list: { data: { status: string; event_id: string }[] } = { data: [] };
      const until = Date.now() + 10_000;
      do {
        list = await call(second, tenant.api_key, 'GET', `/v1/webhooks/${endpoint.id}/deliveries?limit=1000`);
        if (list.data.every((d) => d.status === 'done')) break;
        await new Promise((res) => setTimeout(res, 50));
      } while (Date.now() < until);
      expect(list.data).toHaveLength(USERS);
      expect(list.data.every((d) => d.status === 'done')).toBe(true);
      expect(new Set(list.data.map((d) => d.event_id))).toEqual(new Set(counts.keys()));
      second.child.kill('SIGTERM');
      await second.exited;
    } finally {
      await r.close();
    }
  });
});
