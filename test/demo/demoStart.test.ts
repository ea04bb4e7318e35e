import { execFile, execFileSync, spawn } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmStartArgs } from '../../bench/support/service.js';
import { startDemoSandbox } from '../../src/demo/demoConnections.js';
import { CONNECTED_PROVIDERS } from '../../src/catalog/providers.js';
import { tempDir } from '../support/tmp.js';
import { eventually } from '../webhooks/receiver.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dataDir = tempDir('demo-start');
const children: ReturnType<typeof spawn>[] = [];
const hasJq = (() => {
  try {
    execFileSync('jq', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

/** `npm start -- --demo` (PORT=0: any free port); resolves with stdout once the demo's block is printed. */
function startDemo(args: string[], env: Record<string, string> = {}): Promise<{ out: string; stop: () => Promise<void>; child: ReturnType<typeof spawn>; output: () => string }> {
  const e: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env };
  for (const k of ['EVENTSTORE_URL', 'MONGODB_URL', 'ADMIN_API_KEY', 'SEALING_KEY', 'DEMO']) if (!(k in env)) delete e[k];
  const child = spawn(process.execPath, [...npmStartArgs(), ...args], { cwd: root, env: e, stdio: ['ignore', 'pipe', 'pipe'] });
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
      if (/\nConsole: [^\n]*\n(?:[^\n]+\n)*\n/.test(out)) resolve({ out, stop, child, output: () => out });
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before printing the demo: ${err}${out}`)));
  });
}

type Block = { text: string; shell: string[]; before: string; after: string };

/** The demo's block: from "Demo ready" to the blank line after it; `shell` its indented lines before "Console:". */
function blockOf(out: string): Block {
  const at = out.indexOf('\nDemo ready: ');
  expect(at, out).toBeGreaterThan(-1);
  const end = out.indexOf('\n\n', out.indexOf('\nConsole: ', at));
  const text = out.slice(at + 1, end + 1);
  const shell = text
    .slice(0, text.indexOf('\nConsole: '))
    .split('\n')
    .filter((l) => l.startsWith('  '))
    .map((l) => l.trim());
  return { text, shell, before: out.slice(0, at), after: out.slice(end + 2) };
}

/** Runs the block's exports and one of its curl lines in bash, as pasted into another terminal. */
function runInShell(block: Block, curl: string): Promise<unknown> {
  const script = [...block.shell.filter((l) => l.startsWith('export ')), curl].join('\n');
  return new Promise((resolve, reject) =>
    execFile('bash', ['-c', `set -e -o pipefail\n${script}`], { cwd: root, timeout: 60_000, env: { ...process.env, DATA_DIR: '' } }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    ),
  );
}

describe('a demo from the first start (npm start -- --demo, DEMO=1; issue 23: one short block after the logs, with the README\'s variable names)', () => {
  // One first start for the two tests below (a demo's first start seeds its data, connects demo-user
  // and backfills: the longest thing this file does). The sandbox test runs first, on the demo still
  // up; the block's test then stops it and starts the demo again on the same store.
  let first: Awaited<ReturnType<typeof startDemo>>;
  beforeAll(async () => {
    first = await startDemo(['--demo']);
  }, 240_000);

  it('connects demo-user to Oura and Withings through the built-in provider sandbox over HTTP (issue 11), prints the sandbox\'s addresses with a control line that works, and the sync-runs line shows the finished backfills (issue 23: printed once they settled)', async () => {
    const run = first;
    const block = blockOf(run.out);
    expect(block.text).toContain('its pulls from oura and withings');
    const runs = (await runInShell(block, block.shell.find((l) => l.includes('/sync-runs'))!)) as { data: { provider: string; trigger: string; status: string; objects_stored: number | null }[] };
    expect(runs.data.map((r) => [r.provider, r.trigger, r.status]).sort()).toEqual([
      ['oura', 'backfill', 'succeeded'],
      ['withings', 'backfill', 'succeeded'],
    ]);
    for (const r of runs.data) expect(r.objects_stored).toBeGreaterThan(0);
    const sandbox = /\nProvider sandbox: oura (http:\/\/127\.0\.0\.1:\d+), withings (http:\/\/127\.0\.0\.1:\d+);/.exec(block.text);
    expect(sandbox, block.text).not.toBeNull();
    const control = /\n {2}(curl -s -X POST '(http[^']+\/_sandbox\/control\?action=revoke_consent)')\n/.exec(block.text)!;
    expect(control[2]!.startsWith(sandbox![1]!)).toBe(true);
    const answer = await fetch(control[2]!, { method: 'POST' });
    expect(answer.status).toBeLessThan(300);
    const key = /export KEY=(\S+)/.exec(block.text)![1]!;
    const sleep = await eventually(async () => {
      const url = `${/"(http[^"]+)\/v1\/users\//.exec(block.text)![1]}/v1/users/${/export USER_ID=(\S+)/.exec(block.text)![1]}/sleep?provider=oura`;
      const body = (await (await fetch(url, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: unknown[] };
      return body.data.length > 0 ? body.data : undefined;
    }, 60_000);
    expect(sleep.length).toBeGreaterThan(0);
  }, 240_000);

  it('prints one block after the set-up\'s log lines: KEY and USER_ID exports and two curl lines that work as pasted, the console link, the admin key once; a later start adds no tenant and its KEY line issues a key through the CLI', async () => {
    const block = blockOf(first.out);
    // The set-up's logs come before the block, none inside it.
    expect(block.before).toMatch(/"msg":"etl job done"/);
    expect(block.text).not.toMatch(/^\{"level"/m);
    const key = /^export KEY=(svc_sk_[A-Za-z0-9]{43}) {3}# /.exec(block.shell[0]!)?.[1];
    expect(key, block.text).toBeDefined();
    expect(block.shell[1]).toMatch(/^export USER_ID=[0-9a-f-]{36} {3}# demo-user$/);
    // Issue 36 §7: the address too, under the name the CLI's import and mcp-client read.
    const base = /"(http[^"]+)\/v1\/users\//.exec(block.text)![1]!;
    expect(block.shell[2]).toMatch(new RegExp(`^export WELLSTREAM_URL=${base.replace(/[.]/g, '\\.')} {3}# `));
    // Issue 36 §7: a webhook to a receiver on this machine is taken in the demo, and the block says so.
    expect(block.text).toContain('this demo sets WEBHOOK_ALLOW_PRIVATE_TARGETS=true; a start without --demo refuses them.');
    const local = { url: 'http://127.0.0.1:9/demo-receiver' };
    const hook = await fetch(`${base}/v1/webhooks`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(local) });
    expect(hook.status, await hook.clone().text()).toBe(201);
    const curls = block.shell.filter((l) => l.startsWith('curl '));
    expect(curls).toHaveLength(2);
    for (const c of curls) expect(c).toContain('-H "Authorization: Bearer $KEY"');
    expect(block.text).not.toContain('WELLSTREAM_KEY');
    const stats = (await runInShell(block, curls[0]!)) as { buckets?: unknown[] } & Record<string, unknown>;
    expect(curls[0]).toContain('samples/stats?type=heart_rate');
    expect(JSON.stringify(stats)).toContain('"avg"');
    expect(block.text).toMatch(/\nConsole: http:\/\/127\.0\.0\.1:\d+\/console\/#\/users\/[0-9a-f-]{36} \(sign in with KEY\)\n/);
    expect(block.text).toMatch(/\nInstance admin key \(shown this once; kept in .*admin\.key\): svc_ak_[A-Za-z0-9]{43}\n/);
    await first.stop();

    const second = await startDemo([], { DEMO: '1' });
    const again = blockOf(second.out);
    expect(again.text).not.toMatch(/svc_[sa]k_/);
    expect(again.text).not.toContain('WELLSTREAM_KEY');
    expect(again.shell[0]).toMatch(/^export KEY=\$\(npm run -s cli -- --data-dir \S+ keys issue [0-9a-f-]{36} \| jq -r \.api_key\) {3}# a new API key of the demo tenant/);
    if (hasJq) {
      // The restart's block works as pasted too: its KEY line issues a key in the service's store.
      const users = (await runInShell(again, 'curl -s "' + /"(http[^"]+)\/v1\/users\//.exec(again.text)![1] + '/v1/users" -H "Authorization: Bearer $KEY"')) as { data: unknown[] };
      expect(users.data).toHaveLength(4);
    } else {
      console.log('[demo] jq not installed: the restart block\'s KEY line was not run');
    }
    // The first key still works.
    const url = /"(http[^"]+samples\/stats[^"]+)"/.exec(again.text)![1]!.replace('$USER_ID', /export USER_ID=(\S+)/.exec(again.text)![1]!);
    expect((await fetch(url, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    await second.stop();
  }, 240_000);
});

describe('a demo restart reconnects (issue 36 point 7: after a restart on other sandbox ports both backfills failed with invalid_token)', () => {
  it('restarted while the first demo is still stopping (its sandbox holding the usual ports), it connects demo-user through its own sandbox and every run it queued succeeds', async () => {
    const dir = tempDir('demo-restart');
    const first = await startDemo(['--demo'], { DATA_DIR: dir, SANDBOX_PORT: String(await freePortRun(CONNECTED_PROVIDERS.length)) });
    const firstSandbox = /\nProvider sandbox: oura (http:\/\/[^,]+),/.exec(first.out)![1];
    // The restart's block cannot show the tenant's key again: the first one is used.
    const key = /export KEY=(svc_sk_\S+)/.exec(first.out)![1]!;
    const base = new URL(/"(http[^"]+)\/v1\/users\//.exec(first.out)![1]!);
    // A request whose body never ends keeps the first process stopping (as a busy import did), its sandbox still up.
    const held = request(new URL('/v1/webhooks', base), { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': '1000' } });
    held.on('error', () => {});
    held.write('{"url":');
    await new Promise<void>((resolve) => held.once('socket', (socket) => socket.once('connect', () => resolve())));
    await fetch(new URL('/v1/users', base));
    const firstExited = new Promise<void>((resolve) => first.child.once('exit', () => resolve()));
    first.child.kill('SIGTERM');
    await eventually(async () => (first.output().includes('"msg":"shutting down') ? true : undefined), 30_000);

    const restartedAt = new Date().toISOString();
    const second = await startDemo(['--demo'], { DATA_DIR: dir, SANDBOX_PORT: String(await freePortRun(CONNECTED_PROVIDERS.length)) });
    held.destroy();
    await firstExited;
    const block = blockOf(second.out);
    expect(/\nProvider sandbox: oura (http:\/\/[^,]+),/.exec(block.text)![1]).not.toBe(firstSandbox);
    expect(block.text).toContain('its pulls from oura and withings');
    const secondBase = /"(http[^"]+)\/v1\/users\//.exec(block.text)![1]!;
    const userId = /export USER_ID=(\S+)/.exec(block.text)![1]!;
    const runs = (await (await fetch(`${secondBase}/v1/users/${userId}/sync-runs`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { provider: string; trigger: string; status: string; error: string | null; created_at: string }[] };
    const ours = runs.data.filter((r) => r.created_at >= restartedAt);
    expect(ours.map((r) => r.provider).sort(), JSON.stringify(runs.data)).toEqual(['oura', 'withings']);
    for (const r of ours) expect([r.provider, r.status, r.error]).toEqual([r.provider, 'succeeded', null]);
    await second.stop();
  }, 300_000);
});

describe('the demo\'s provider sandbox listens where `npm run sandbox` does (issue 23: the README\'s control address holds under --demo)', () => {
  it('takes the ports from SANDBOX_PORT (default 9100) when they are free, and any free ports while one is taken', async () => {
    const base = await freePortRun(CONNECTED_PROVIDERS.length);
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(base, '127.0.0.1', resolve));
    const busy = await startDemoSandbox({ SANDBOX_PORT: String(base) });
    expect(busy).not.toBeNull();
    expect(busy!.urls.oura).not.toBe(`http://127.0.0.1:${base}`);
    expect((await fetch(`${busy!.urls.oura}/_sandbox/control?action=revoke_consent`, { method: 'POST' })).status).toBeLessThan(300);
    await busy!.close();
    await new Promise<void>((resolve) => holder.close(() => resolve()));
    const free = await startDemoSandbox({ SANDBOX_PORT: String(base) });
    expect(free!.urls.oura).toBe(`http://127.0.0.1:${base}`);
    expect(free!.urls.whoop).toBe(`http://127.0.0.1:${base + 1}`);
    await free!.close();
  });
});

/**
 * The first of `count` consecutive ports that are free, below the range the system hands out to
 * other sockets (32768 and up on Linux): a port the system handed out, and its neighbours, may be
 * taken by another test's connection a moment later.
 */
async function freePortRun(count: number): Promise<number> {
  const canListen = (port: number) =>
    new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
  for (let base = 20_000 + Math.floor(Math.random() * 10_000); base < 32_000; base += count) {
    let free = true;
    for (let p = base; p < base + count && free; p++) free = await canListen(p);
    if (free) return base;
  }
  throw new Error('no run of free ports below 32000');
}
