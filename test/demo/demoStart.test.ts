import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';
import { eventually } from '../webhooks/receiver.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dataDir = tempDir('demo-start');
const children: ReturnType<typeof spawn>[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

/** `npm start -- --demo` (PORT=0: any free port); resolves with stdout once the curl line is printed. */
function startDemo(args: string[], env: Record<string, string> = {}): Promise<{ out: string; stop: () => Promise<void> }> {
  const e: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env };
  for (const k of ['EVENTSTORE_URL', 'MONGODB_URL', 'ADMIN_API_KEY', 'SEALING_KEY', 'DEMO']) if (!(k in env)) delete e[k];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: root, env: e, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/samples\/stats[^\n]*"\n/.test(out)) resolve({ out, stop });
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before printing the demo: ${err}${out}`)));
  });
}

describe('a demo from the first start (npm start -- --demo, DEMO=1)', () => {
  it('prints the demo tenant key and a curl line that answers merged heart-rate statistics; a later start adds no tenant and shows no key', async () => {
    const first = await startDemo(['--demo']);
    const key = /\n {2}(svc_sk_[A-Za-z0-9]{43})\n/.exec(first.out)?.[1];
    expect(key).toBeDefined();
    const curl = /curl -s -H "Authorization: Bearer (\S+)" "([^"]+)"/.exec(first.out)!;
    expect(curl[1]).toBe(key);
    const res = await fetch(curl[2]!, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { buckets?: unknown[] }[] } & Record<string, unknown>;
    expect(JSON.stringify(body)).toContain('"avg"');
    expect(curl[2]).toContain('type=heart_rate');
    await first.stop();

    const second = await startDemo([], { DEMO: '1' });
    expect(second.out).not.toMatch(/svc_sk_/);
    expect(second.out).toContain('keys issue');
    // The same key still works and the tenant still has its four users.
    const url = /"(http[^"]+samples\/stats[^"]+)"/.exec(second.out)![1]!;
    const again = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    expect(again.status).toBe(200);
    const users = await fetch(new URL('/v1/users', url), { headers: { authorization: `Bearer ${key}` } });
    expect(((await users.json()) as { data: unknown[] }).data).toHaveLength(4);
    await second.stop();
  }, 180_000);

  it('connects demo-user to Oura and Withings through the built-in provider sandbox over HTTP (issue 11: the demo runs the whole flow); their backfills store records readable through the read routes', async () => {
    const run = await startDemo(['--demo'], { DATA_DIR: tempDir('demo-sandbox') });
    const key = /\n {2}(svc_sk_[A-Za-z0-9]{43})\n/.exec(run.out)![1]!;
    expect(run.out).toContain('connected to oura and withings through the built-in provider sandbox');
    const syncRuns = /"(http[^"]+\/sync-runs)"/.exec(run.out)![1]!;
    const auth = { headers: { authorization: `Bearer ${key}` } };
    const done = await eventually(async () => {
      const runs = ((await (await fetch(syncRuns, auth)).json()) as { data: { provider: string; trigger: string; status: string; objects_stored: number | null }[] }).data;
      return runs.length === 2 && runs.every((r) => r.status === 'succeeded') ? runs : undefined;
    }, 120_000);
    expect(done.map((r) => [r.provider, r.trigger]).sort()).toEqual([['oura', 'backfill'], ['withings', 'backfill']]);
    for (const r of done) expect(r.objects_stored).toBeGreaterThan(0);
    const sleep = await eventually(async () => {
      const body = (await (await fetch(syncRuns.replace(/sync-runs$/, 'sleep?provider=oura'), auth)).json()) as { data: unknown[] };
      return body.data.length > 0 ? body.data : undefined;
    }, 60_000);
    expect(sleep.length).toBeGreaterThan(0);
    await run.stop();
  }, 240_000);
});

