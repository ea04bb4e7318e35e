import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../commands/tenants/createTenant.js';
import { findApiKeyByHash } from '../../queries/tenants/findApiKey.js';
import { openStores } from '../../src/app/stores.js';
import { loadConfig } from '../../src/config.js';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { newSecret, sha256Hex } from '../../src/shared/secrets.js';
import { tempDir } from '../support/tmp.js';
import { runCli } from './cliProcess.js';

describe('cli: keys (contracts.md §2)', () => {
  const dataDir = tempDir('wellstream-cli-keys-');
  const tenantId = randomUUID();

  async function withStores<T>(fn: (s: { eventStore: EventStore; readStore: ReadStore }) => Promise<T>): Promise<T> {
    const stores = await openStores(loadConfig({ DATA_DIR: dataDir }));
    try {
      return await fn(stores);
    } finally {
      await stores.eventStore.close();
      await stores.readStore.close();
    }
  }

  beforeAll(async () => {
    // Only the events: the CLI's own runners project them before it reads.
    await withStores(({ eventStore }) =>
      createTenant(eventStore, { tenantId, name: 'acme', keyId: randomUUID(), keyHash: sha256Hex(newSecret('tenantKey')), at: new Date().toISOString(), by: 'test' }),
    );
  });

  it('§2: `keys revoke <key_id>` with an unknown key id exits 1 with a message on stderr and nothing on stdout', async () => {
    const run = await runCli(dataDir, 'keys', 'revoke', randomUUID());
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: api key not found: /m);
  });

  it('§2: `keys revoke <key_id>` revokes a key issued with `keys issue`; keys are svc_sk_ + 43 base62, stored only as SHA-256', async () => {
    const issued = await runCli(dataDir, 'keys', 'issue', tenantId);
    expect(issued.code, issued.stderr).toBe(0);
    expect(issued.lines).toHaveLength(1);
    const { tenant_id, key_id, api_key } = JSON.parse(issued.lines[0]!);
    expect(tenant_id).toBe(tenantId);
    expect(api_key).toMatch(/^svc_sk_[0-9A-Za-z]{43}$/);

    const before = await withStores(({ readStore }) => findApiKeyByHash(readStore, sha256Hex(api_key)));
    expect(before).toMatchObject({ key_id, tenant_id: tenantId, revoked_at: null });

    const revoked = await runCli(dataDir, 'keys', 'revoke', key_id);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.lines.map((l) => JSON.parse(l))).toEqual([{ key_id, revoked: true }]);

    const after = await withStores(async ({ readStore }) => ({
      key: await findApiKeyByHash(readStore, sha256Hex(api_key)),
      all: await readStore.find('api_keys'),
    }));
    expect(after.key?.revoked_at).toEqual(expect.any(String));
    // Nothing in the read model holds the plain secret.
    expect(JSON.stringify(after.all)).not.toContain(api_key);
  });
});
