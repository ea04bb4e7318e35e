import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../commands/audit/recordAudit.js';
import { openStores } from '../../src/app/stores.js';
import { loadConfig } from '../../src/config.js';
import { adminAuditEntry } from '../support/auditEntries.js';
import { tempDir } from '../support/tmp.js';
import { jsonLines, runCli } from './cliProcess.js';

describe('cli: audit list (contracts.md §2 out-of-band operations)', () => {
  const dataDir = tempDir('wellstream-cli-audit-');
  const tenantId = randomUUID();

  beforeAll(async () => {
    const { eventStore, readStore } = await openStores(loadConfig({ DATA_DIR: dataDir }));
    const entry = (log: string, action: string) => adminAuditEntry(log, action, tenantId);
    await recordAudit(eventStore, [entry('admin', 'first'), entry('admin', 'second'), entry(tenantId, 'older'), entry('admin', 'third'), entry(tenantId, 'tenant-only')]);
    await eventStore.close();
    await readStore.close();
  });

  it('§2: `audit list` prints the admin log by default, newest first, one JSON line per entry; `--limit n` stops after n', async () => {
    const run = await runCli(dataDir, 'audit', 'list', '--limit', '2');
    expect(run.code, run.stderr).toBe(0);
    const entries = jsonLines(run);
    // The tenant's own entries (interleaved with the admin's) are not in the admin log.
    expect(entries.map((e) => e.action)).toEqual(['third', 'second']);
    expect(entries[0]).toMatchObject({ log: 'admin', actor: 'admin', seq: expect.any(Number), at: expect.any(String) });
    expect(entries[0]!.seq as number).toBeGreaterThan(entries[1]!.seq as number);
  });
});
