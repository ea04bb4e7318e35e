import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort, npmStart } from '../../bench/support/service.js';
import { fixtureA, requestFor } from '../ingest/uploadHelpers.js';
import { httpCall } from '../support/httpCall.js';
import { tempDir } from '../support/tmp.js';
import { until } from '../support/until.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LIMIT_MS = 90_000;

/**
 * Issue 27 (resident memory): `npm start` (package.json: `node --max-semi-space-size=4
 * scripts/start.mjs`) runs the service compiled to JavaScript, without tsx's loader: its HTTP
 * thread, and the projector and ETL threads it starts, load `dist/` modules. An upload goes through all three, and SIGINT (the
 * terminal's Ctrl-C) stops it cleanly.
 */
describe('npm start runs the compiled service (issue 27, resident memory)', () => {
  it('serves, normalises and projects an upload from compiled threads, without tsx, and stops on SIGINT', { timeout: LIMIT_MS + 20_000 }, async () => {
    const deadline = Date.now() + LIMIT_MS;
    const script = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')).scripts.start as string;
    // The main isolate's young generation is kept small (docs/decisions.md, "The main thread's young
    // generation is capped"), its threads share two malloc arenas and malloc's mmap threshold is fixed
    // (docs/memory.md, issue 38).
    expect(script).toBe('MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-131072} node --max-semi-space-size=4 scripts/start.mjs');
    const port = await freePort();
    // As from a shell that sets none of npm start's variables itself.
    const { env: startEnv, args } = npmStart({});
    const env: NodeJS.ProcessEnv = { ...process.env, ...startEnv, DATA_DIR: tempDir('wellstream-compiled-'), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    for (const k of ['EVENTSTORE_URL', 'MONGODB_URL', 'SEALING_KEY', 'DEMO', 'ADMIN_API_KEY', 'NODE_OPTIONS']) delete env[k];
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (output += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (output += s));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const base = `http://127.0.0.1:${port}`;
      await until(`listening\n${output}`, deadline, async () => (await fetch(`${base}/v1/users`)).status === 401);
      const adminKey = /svc_ak_[A-Za-z0-9]+/.exec(output)![0];
      const tenant = (await httpCall(base, 'POST', '/v1/admin/tenants', adminKey, { name: 'compiled' })).json();
      const key = tenant.api_key as string;
      const user = (await httpCall(base, 'POST', '/v1/users', key, { external_ref: 'compiled-1' })).json();
      const token = (await httpCall(base, 'POST', `/v1/users/${String(user.id)}/tokens`, key, { scopes: ['upload'] })).json();
      const req = requestFor('device-a', fixtureA());
      const accepted = await httpCall(base, 'POST', '/v1/ingest/device-a', token.token as string, req.body, { 'content-type': req.contentType, 'upload-id': `c-${randomUUID()}` });
      expect(accepted.status).toBe(202);
      const coverage = await until(`the upload normalised and projected\n${output}`, deadline, async () => {
        const c = (await httpCall(base, 'GET', `/v1/users/${String(user.id)}/coverage`, key)).json() as { pending_jobs: number; days: { records: number }[] };
        return c.pending_jobs === 0 && c.days.length > 0 && c;
      });
      expect(coverage.days.reduce((n, d) => n + d.records, 0)).toBeGreaterThan(0);
      // The service process itself: node on the start script, with no loader flag (tsx would be `--import tsx`).
      const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      expect(cmdline.slice(1)).toEqual(['--max-semi-space-size=4', 'scripts/start.mjs']);
      expect(readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0')).toEqual(expect.arrayContaining(['MALLOC_ARENA_MAX=2', 'MALLOC_MMAP_THRESHOLD_=131072']));
      expect(output).not.toMatch(/tsx|error/i);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('npm start sets the C library settings the service is measured with (issue 38, memory)', () => {
  it('starts with two malloc arenas unless the environment already names a number (docs/memory.md)', () => {
    expect(npmStart({}).env.MALLOC_ARENA_MAX).toBe('2');
    // An operator's own value is kept, as the shell's ${MALLOC_ARENA_MAX:-2} keeps it.
    expect(npmStart({ MALLOC_ARENA_MAX: '4' }).env.MALLOC_ARENA_MAX).toBe('4');
    expect(npmStart({}).args).toEqual(['--max-semi-space-size=4', 'scripts/start.mjs']);
  });

  it('fixes the mmap threshold of malloc at 128 KiB unless the environment already names one, so that freed large blocks go back to the system (docs/memory.md)', () => {
    // Set, the threshold no longer rises with the largest block freed (up to 32 MiB), and the
    // main heap's free top is trimmed above 128 KiB instead of above twice that threshold.
    expect(npmStart({}).env).toEqual({ MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' });
    expect(npmStart({ MALLOC_MMAP_THRESHOLD_: '1048576' }).env.MALLOC_MMAP_THRESHOLD_).toBe('1048576');
    expect(npmStart({}).args).toEqual(['--max-semi-space-size=4', 'scripts/start.mjs']);
  });
});
