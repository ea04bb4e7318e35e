import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import os from 'node:os';
import { statCpuMs } from './threadCpu.js';

/** A free loopback port (benchmarks only ever talk to this machine). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * How `npm start` runs the service: package.json's start script is `NAME=${NAME:-default} …`
 * assignments (the C library's settings, which must be in the environment before node starts),
 * then `node`, its flags and the start script. `env` is the assignments as the shell would
 * expand them in `outer` (a variable set there keeps its value), `args` what follows `node`, so
 * that benchmarks and tests measure what `npm start` starts.
 */
export function npmStart(outer: NodeJS.ProcessEnv = process.env): { env: Record<string, string>; args: string[] } {
  const script = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = script.split(' ').filter(Boolean);
  const env: Record<string, string> = {};
  for (;;) {
    const assignment = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(words[0] ?? '');
    if (!assignment) break;
    words.shift();
    const name = assignment[1]!;
    const value = assignment[2]!;
    const fallback = new RegExp(`^\\$\\{${name}:-([^}]*)\\}$`).exec(value);
    if (!fallback && value.includes('$')) throw new Error(`npm start sets ${name} in a form this reader does not expand: ${value}`);
    env[name] = fallback ? outer[name] || fallback[1]! : value;
  }
  const [node, ...args] = words;
  if (node !== 'node') throw new Error(`npm start does not run node: ${script}`);
  return { env, args };
}

/** The node arguments `npm start` runs the service with (npmStart). */
export function npmStartArgs(): string[] {
  return npmStart().args;
}

export type RunningService = { base: string; adminKey: string; child: ChildProcess; stop: () => Promise<void> };

/** Starts the service as `npm start` does (unless BENCH_SERVICE says otherwise) on a fresh data directory. */
export async function startService(dataDir: string, env: Record<string, string> = {}): Promise<RunningService> {
  const port = await freePort();
  // BENCH_NODE_ARGS passes extra node flags to the service (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p` to profile a run).
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // By default the service runs as `npm start` runs it (its node flags, scripts/start.mjs: compiled JavaScript,
  // compiled again where a source changed); BENCH_SERVICE=tsx runs the sources through tsx (as
  // `npm start` did before issue 27), BENCH_SERVICE=dist an existing build as it is (the Docker image's
  // `node dist/src/main.js`). BENCH_SERVICE_STDOUT=<file> keeps the service's standard output (e.g. with `--trace-gc`).
  const entries: Record<string, string[]> = { tsx: ['--import', 'tsx', 'src/main.ts'], dist: ['dist/src/main.js'] };
  const { env: startEnv, args: start } = npmStart();
  // BENCH_NODE_ARGS come after npm start's own flags, so they can override them.
  const args = entries[process.env.BENCH_SERVICE ?? ''] ? [...nodeArgs, ...entries[process.env.BENCH_SERVICE!]!] : [...start.slice(0, -1), ...nodeArgs, ...start.slice(-1)];
  const out = process.env.BENCH_SERVICE_STDOUT ? openSync(process.env.BENCH_SERVICE_STDOUT, 'w') : 'ignore';
  const child = spawn(process.execPath, args, {
    // npm start's environment (and the Docker image's, which sets the same) under every BENCH_SERVICE.
    env: { ...process.env, ...startEnv, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', out, 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/openapi.yaml`)).ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error('service did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  const adminKey = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
  return {
    base,
    adminKey,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * CPU time (user + system, all threads) the service process has used so far, in ms, from
 * /proc (Linux; null elsewhere). On a shared machine wall-clock rates move with the neighbours'
 * load; CPU time per unit of work moves much less, so benchmarks report both.
 */
export function cpuMsOf(pid: number | undefined): number | null {
  try {
    return statCpuMs(`/proc/${pid}/stat`);
  } catch {
    return null;
  }
}

/**
 * CPU time (user + system) of this process's children that have ended and been waited for, in
 * ms, from /proc (null elsewhere): a `spawnSync`'d command's CPU is the difference around it.
 */
export function childrenCpuMs(): number | null {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    // cutime and cstime are fields 16 and 17 of stat (13 and 14 after the command name).
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return null;
  }
}

export async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** A tenant with one user holding an upload token, on a bench's own service: the headers and ids a bench calls it with. */
export type BenchUploader = { admin: { authorization: string; 'content-type': string }; tk: { authorization: string; 'content-type': string }; userId: string; token: string };

export async function benchUploader(svc: RunningService): Promise<BenchUploader> {
  const admin = { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json' };
  const tenant = await json<{ api_key: string }>(await fetch(`${svc.base}/v1/admin/tenants`, { method: 'POST', headers: admin, body: '{"name":"bench"}' }));
  const tk = { authorization: `Bearer ${tenant.api_key}`, 'content-type': 'application/json' };
  const user = await json<{ id: string }>(await fetch(`${svc.base}/v1/users`, { method: 'POST', headers: tk, body: '{}' }));
  const { token } = await json<{ token: string }>(await fetch(`${svc.base}/v1/users/${user.id}/tokens`, { method: 'POST', headers: tk, body: '{"scopes":["upload"]}' }));
  return { admin, tk, userId: user.id, token };
}

export function machine(): string {
  return `${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString()}`;
}
