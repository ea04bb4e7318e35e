import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { UUID_RE } from '../../src/shared/ids.js';
import { tempDir } from '../support/tmp.js';
import { jsonLines, runCli, type CliRun } from './cliProcess.js';

describe('cli: tenants (contracts.md §2)', () => {
  const dataDir = tempDir('wellstream-cli-tenants-');
  let created: CliRun;

  beforeAll(async () => {
    // A new store: the CLI makes one only when asked (issue 23).
    created = await runCli(dataDir, '--init', 'tenants', 'create', 'demo');
  });

  it('§2: `tenants create <name>` prints exactly one JSON line {"tenant_id","name","api_key"} on stdout', () => {
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.endsWith('\n')).toBe(true);
    expect(created.lines).toHaveLength(1);
    const out = JSON.parse(created.lines[0]!);
    expect(Object.keys(out).sort()).toEqual(['api_key', 'name', 'tenant_id']);
    expect(out.name).toBe('demo');
    expect(out.tenant_id).toMatch(UUID_RE);
  });

  it('§2: the tenant key printed by `tenants create` is svc_sk_ + 43 base62', () => {
    const out = JSON.parse(created.lines[0]!);
    expect(out.api_key).toMatch(/^svc_sk_[0-9A-Za-z]{43}$/);
  });

  it('§2: `tenants list` shows the created tenant as {"tenant_id","name","created_at"}', async () => {
    const { tenant_id } = JSON.parse(created.lines[0]!);
    const list = await runCli(dataDir, 'tenants', 'list');
    expect(list.code, list.stderr).toBe(0);
    const rows = jsonLines(list);
    expect(rows).toEqual([{ tenant_id, name: 'demo', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
  });

  it('issue 23: a second tenant of the same name, in any case or spacing, is refused as a conflict naming the tenant that has it, and nothing is created', { timeout: 120_000 }, async () => {
    const { tenant_id } = JSON.parse(created.lines[0]!);
    for (const name of ['demo', ' DEMO ', 'Demo']) {
      const again = await runCli(dataDir, 'tenants', 'create', name);
      expect(again.code).toBe(1);
      expect(again.stdout).toBe('');
      expect(again.stderr).toContain(`a tenant named "demo" already exists (tenant ${tenant_id})`);
      expect(again.stderr).not.toMatch(/\n\s+at /);
    }
    expect(jsonLines(await runCli(dataDir, 'tenants', 'list'))).toHaveLength(1);
    const other = await runCli(dataDir, 'tenants', 'create', 'demo two');
    expect(other.code, other.stderr).toBe(0);
    expect(jsonLines(await runCli(dataDir, 'tenants', 'list')).map((r) => r.name)).toEqual(['demo', 'demo two']);
    expect(existsSync(join(dataDir, 'events.sqlite'))).toBe(true);
  });
});
