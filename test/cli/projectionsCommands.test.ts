import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../commands/audit/recordAudit.js';
import { eraseUser } from '../../commands/deletions/eraseUser.js';
import { createTenant } from '../../commands/tenants/createTenant.js';
import { issueApiKey } from '../../commands/tenants/issueApiKey.js';
import { revokeApiKey } from '../../commands/tenants/revokeApiKey.js';
import { mintUserToken } from '../../commands/users/mintUserToken.js';
import { registerUser } from '../../commands/users/registerUser.js';
import { requestUserDeletion } from '../../commands/users/requestUserDeletion.js';
import { projections } from '../../projections/index.js';
import { createContext } from '../../src/app/context.js';
import { createLogger } from '../../src/app/logger.js';
import { openStores } from '../../src/app/stores.js';
import { loadConfig } from '../../src/config.js';
import type { Checkpoint, Doc } from '../../src/readstore/readStore.js';
import { newSecret, sha256Hex } from '../../src/shared/secrets.js';
import { adminAuditEntry } from '../support/auditEntries.js';
import { tempDir } from '../support/tmp.js';
import { runCli } from './cliProcess.js';

/** Checkpoints as `projections status` reports them: a projection never checkpointed is at 0. */
type Dump = { collections: Record<string, Doc[]>; checkpoints: Record<string, number>; statuses: Record<string, Checkpoint['status'] | 'new'> };

/** The projections the seed below feeds; projections added later may stay empty here. */
const SEEDED = ['tenants', 'users', 'deletion_jobs', 'audit_log'];

/** Every collection of every projection, read straight from the read store (the CLI has exited). */
async function dumpReadModels(dataDir: string): Promise<Dump> {
  const { eventStore, readStore } = await openStores(loadConfig({ DATA_DIR: dataDir }));
  try {
    const dump: Dump = { collections: {}, checkpoints: {}, statuses: {} };
    for (const p of projections) {
      for (const c of p.collections) dump.collections[c.name] = await readStore.find(c.name, { sort: [['_id', 1]] });
      const cp = await readStore.getCheckpoint(p.name);
      dump.checkpoints[p.name] = cp?.position ?? 0;
      dump.statuses[p.name] = cp?.status ?? 'new';
    }
    return dump;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
}

/** Events for every projection (tenants, keys, users, tokens, a finished deletion, audit entries), then the live runners build the read models. */
async function seed(dataDir: string): Promise<void> {
  const config = loadConfig({ DATA_DIR: dataDir });
  const log = createLogger('silent');
  const at = () => new Date().toISOString();
  const writer = await createContext(config, { log, runBackground: false });
  try {
    const es = writer.eventStore;
    const tenantId = randomUUID();
    await createTenant(es, { tenantId, name: 'acme', keyId: randomUUID(), keyHash: sha256Hex(newSecret('tenantKey')), at: at(), by: 'test' });
    await createTenant(es, { tenantId: randomUUID(), name: 'globex', keyId: randomUUID(), keyHash: sha256Hex(newSecret('tenantKey')), at: at(), by: 'test' });
    const revokedKey = randomUUID();
    await issueApiKey(es, { tenantId, keyId: revokedKey, keyHash: sha256Hex(newSecret('tenantKey')), at: at(), by: 'test' });
    await revokeApiKey(es, { tenantId, keyId: revokedKey, at: at(), by: 'test' });
    const users = [randomUUID(), randomUUID(), randomUUID()];
    for (const [i, userId] of users.entries()) {
      await registerUser(es, { tenantId, userId, externalRef: i === 0 ? null : `ext-${i}`, at: at() });
      await mintUserToken(es, {
        tenantId,
        userId,
        tokenId: randomUUID(),
        tokenHash: sha256Hex(newSecret('userToken')),
        scopes: ['upload', 'read'],
        ttlSeconds: 0,
        at: at(),
        by: 'test',
      });
    }
    // One deletion run to its end (erased user, finished job), one left pending.
    const done = await requestUserDeletion(es, { tenantId, userId: users[1]!, jobId: randomUUID(), at: at(), by: 'test' });
    await eraseUser({ eventStore: es, readStore: writer.readStore, rawStore: writer.rawStore, dataKeys: writer.dataKeys, settle: async () => {} }, done.jobId);
    await requestUserDeletion(es, { tenantId, userId: users[2]!, jobId: randomUUID(), at: at(), by: 'test' });
    const entry = (log: string, action: string) => adminAuditEntry(log, action, tenantId, { request_id: randomUUID(), target: tenantId, at: at() });
    await recordAudit(es, [entry('admin', 'tenant.create'), entry(tenantId, 'tenant.create'), entry('admin', 'api_key.revoke')]);
  } finally {
    await writer.close();
  }
  // Projections only: the reactors would carry the pending deletion on behind the snapshot's back.
  const live = await createContext(config, { log, runBackground: 'projections' });
  try {
    await live.settle();
  } finally {
    await live.close();
  }
}

describe('cli: projections (contracts.md §2 out-of-band operations on the read models)', () => {
  const dataDir = tempDir('wellstream-cli-projections-');

  beforeAll(async () => {
    await seed(dataDir);
  });

  it('§2: `projections status` lists every projection of projections/index.ts with position, head and lag', async () => {
    const table = await runCli(dataDir, 'projections', 'status');
    expect(table.code, table.stderr).toBe(0);
    expect(table.lines[0]).toMatch(/^PROJECTION\s+STATUS\s+POSITION\s+HEAD\s+LAG\s+LAG_SECONDS\s+DEAD_LETTERS\s+STALL$/);
    const rows = table.lines.slice(1).map((l) => l.split(/\s+/));
    expect(rows.map((r) => r[0])).toEqual(projections.map((p) => p.name));
    for (const [name, status, position, head, lag, lagSeconds, deadLetters, stall] of rows) {
      expect(deadLetters).toBe('0');
      // Contracts §19: no projection is waiting on its store or stopped on an erasure.
      expect(stall).toBe('-');
      expect(status).toMatch(SEEDED.includes(name!) ? /^live$/ : /^(live|new)$/);
      // Lag counts from the checkpoint to the head, and is 0 when none of the projection's events lie beyond it.
      expect([0, Number(head) - Number(position)]).toContain(Number(lag));
      if (SEEDED.includes(name!)) expect(Number(lag), name).toBe(0);
      expect(lagSeconds).toMatch(/^(\d+\.\d|-)$/);
    }
  });

  it('§2: `projections rebuild` leaves every collection of every projection exactly as the live runners built it', async () => {
    const before = await dumpReadModels(dataDir);
    // The seed reached these projections' collections, so the comparison is not between empty collections.
    for (const p of projections.filter((p) => SEEDED.includes(p.name))) {
      for (const c of p.collections) expect(before.collections[c.name]!.length, c.name).toBeGreaterThan(0);
    }

    const run = await runCli(dataDir, 'projections', 'rebuild');
    expect(run.code, run.stderr).toBe(0);
    // stdout: a header and one summary line per projection (name, events, seconds, events/s); the bars went to stderr.
    expect(run.lines[0]).toMatch(/^PROJECTION\s+EVENTS\s+SECONDS\s+EVENTS\/S/);
    expect(run.lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(projections.map((p) => p.name));
    for (const p of projections) expect(run.stderr).toContain(p.name);

    const after = await dumpReadModels(dataDir);
    expect(after.collections).toEqual(before.collections);
    expect(after.checkpoints).toEqual(before.checkpoints);
    expect(Object.values(after.statuses).every((s) => s === 'live')).toBe(true);
  });

  it('§2: `projections rebuild --pipeline` (the replay writing on a store thread) leaves every collection exactly as the live runners built it', async () => {
    const before = await dumpReadModels(dataDir);
    const run = await runCli(dataDir, 'projections', 'rebuild', '--pipeline', '--no-progress');
    expect(run.code, run.stderr).toBe(0);
    expect(run.lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(projections.map((p) => p.name));
    const after = await dumpReadModels(dataDir);
    expect(after.collections).toEqual(before.collections);
    expect(after.checkpoints).toEqual(before.checkpoints);
    expect(Object.values(after.statuses).every((s) => s === 'live')).toBe(true);
  });

  it('§2: `projections rebuild` with an unknown projection name exits 1 and touches nothing', async () => {
    const before = await dumpReadModels(dataDir);
    const run = await runCli(dataDir, 'projections', 'rebuild', 'tenants', 'no_such_projection', '--json');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: unknown projection\(s\): no_such_projection/);
    expect(await dumpReadModels(dataDir)).toEqual(before);
  });
});
