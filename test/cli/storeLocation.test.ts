import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';
import { jsonLines, runCli, runCliIn } from './cliProcess.js';

describe('the CLI works on the service\'s store and never makes a second one by mistake (issue 23: one store for every command)', () => {
  let service: TestApp;

  beforeAll(async () => {
    service = await startTestApp();
  });
  afterAll(async () => {
    await service?.close();
  });

  it('refuses to create a store where there is none: exit 1, the directory it looked in, how to point it at the service, and nothing written', async () => {
    const cwd = tempDir('wellstream-cli-cwd-');
    const run = await runCliIn(cwd, {}, 'tenants', 'create', 'acme');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`no Wellstream store in ${join(cwd, 'data')} (from the default ./data (DATA_DIR is unset))`);
    expect(run.stderr).toContain('--data-dir <dir>');
    expect(run.stderr).toContain('DATA_DIR=<dir>');
    expect(run.stderr).toContain('--init');
    // No admin key, no sealing key, no database: not even the directory.
    expect(existsSync(join(cwd, 'data'))).toBe(false);

    const named = tempDir('wellstream-cli-empty-');
    const viaEnv = await runCliIn(cwd, { DATA_DIR: named }, 'tenants', 'list');
    expect(viaEnv.code).toBe(1);
    expect(viaEnv.stderr).toContain(`no Wellstream store in ${named} (from DATA_DIR)`);
    const viaFlag = await runCliIn(cwd, {}, '--data-dir', named, 'tenants', 'list');
    expect(viaFlag.stderr).toContain(`no Wellstream store in ${named} (from --data-dir)`);
    expect(readdirSync(named)).toEqual([]);
  });

  it('finds the store the way the service does: DATA_DIR, else ./data under the working directory', async () => {
    const cwd = tempDir('wellstream-cli-default-');
    mkdirSync(join(cwd, 'data'));
    const init = await runCliIn(cwd, {}, '--init', 'tenants', 'create', 'first');
    expect(init.code, init.stderr).toBe(0);
    // The first use of a new store shows its admin key once, on stderr.
    expect(init.stderr).toMatch(/Generated the admin API key \(stored in .*data\/admin\.key, shown once\): svc_ak_/);
    expect(existsSync(join(cwd, 'data', 'events.sqlite'))).toBe(true);
    const list = await runCliIn(cwd, {}, 'tenants', 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(jsonLines(list).map((r) => r.name)).toEqual(['first']);
    // The same store named by DATA_DIR from anywhere else.
    const elsewhere = await runCliIn(tempDir('wellstream-cli-other-'), { DATA_DIR: join(cwd, 'data') }, 'tenants', 'list');
    expect(jsonLines(elsewhere).map((r) => r.name)).toEqual(['first']);
  });

  it('--data-dir names the store, before or after the command, over DATA_DIR; --init on an existing store changes nothing', async () => {
    const wrong = tempDir('wellstream-cli-wrong-');
    const before = await runCliIn(wrong, { DATA_DIR: wrong }, '--data-dir', service.dataDir, 'tenants', 'create', 'flag-before');
    expect(before.code, before.stderr).toBe(0);
    const after = await runCliIn(wrong, { DATA_DIR: wrong }, 'tenants', 'create', 'flag-after', '--data-dir', service.dataDir);
    expect(after.code, after.stderr).toBe(0);
    const again = await runCli(service.dataDir, '--init', 'tenants', 'list');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('Generated');
    expect(jsonLines(again).map((r) => r.name)).toEqual(expect.arrayContaining(['flag-before', 'flag-after']));
    expect(readdirSync(wrong)).toEqual([]);
  });

  it('a tenant the CLI creates in the service\'s store authenticates at the running service at once', async () => {
    const created = await runCli(service.dataDir, 'tenants', 'create', 'made-by-cli');
    expect(created.code, created.stderr).toBe(0);
    const { api_key } = JSON.parse(created.lines[0]!) as { api_key: string };
    const users = await service.call('GET', '/v1/users', { key: api_key });
    expect(users.statusCode, users.body).toBe(200);
  });
});
