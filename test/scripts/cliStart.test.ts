import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { outDirOf } from '../../scripts/buildService.mjs';
import { tempDir } from '../support/tmp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function node(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, args, { cwd: ROOT, env, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    }),
  );
}

/**
 * Issue 36 §6: every `npm run cli` command paid 4-5 s of tsx start-up. The CLI runs compiled as
 * `npm start` does (scripts/buildService.mjs): what changed is compiled into dist/, then
 * dist/src/cli/main.js runs in the same process, without a loader.
 */
describe('npm run cli runs the compiled CLI (issue 36 §6)', () => {
  it('the script is node on scripts/cli.mjs, which runs dist/src/cli/main.js without tsx', { timeout: 150_000 }, async () => {
    const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.cli;
    expect(script).toBe('node scripts/cli.mjs');
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: tempDir('wellstream-cli-compiled-') };
    for (const k of ['EVENTSTORE_URL', 'MONGODB_URL', 'ADMIN_API_KEY', 'SEALING_KEY', 'NODE_OPTIONS']) delete env[k];
    const created = await node(['scripts/cli.mjs', '--init', 'tenants', 'create', 'compiled-cli'], env);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'compiled-cli', api_key: expect.stringMatching(/^svc_sk_/) });
    expect(existsSync(join(outDirOf(ROOT), 'src', 'cli', 'main.js'))).toBe(true);
    const listed = await node(['scripts/cli.mjs', 'tenants', 'list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('compiled-cli');
    expect(listed.stderr).not.toMatch(/tsx/);
  });
});
