import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { DELIVERIES, subjectOf, webhookEngineCollections, type DeliveryDoc, type DeliveryStatus } from '../../../src/webhooks/deliveryDocs.js';
import { deliveryErasure } from '../../../src/webhooks/deliveryErasure.js';
import { DAY_MS, DeliveryRetention } from '../../../src/processes/webhooks/deliveryRetention.js';
import { tempDir } from '../../support/tmp.js';

/**
 * Issue 20, finding 4: webhook deliveries name users, external_refs, record types and days. They
 * are kept WEBHOOK_DELIVERY_RETENTION_DAYS (default 30) and purged by the engine; a user's
 * deletion deletes those about the user (but its own announcement), a provider erasure those
 * describing the erased data; deliveries stored before they named their user are found too.
 */
const NOW = Date.parse('2026-12-01T00:00:00Z');
let seq = 0;

function delivery(o: { type: string; user?: string; provider?: string; status?: DeliveryStatus; ageDays?: number; legacy?: boolean }): DeliveryDoc {
  const id = ++seq;
  const payload = { id: `e-${id}`, type: o.type, timestamp: '2026-11-01T00:00:00Z', test: false, data: { ...(o.user ? { user_id: o.user, external_ref: `ref-${o.user}` } : {}), ...(o.provider ? { provider: o.provider } : {}) } };
  const doc: DeliveryDoc = {
    _id: `ep:${id}`,
    id,
    endpoint_id: 'ep',
    tenant_id: 't',
    event_id: payload.id,
    event_type: o.type,
    status: o.status ?? 'done',
    attempts: 1,
    last_status_code: 204,
    last_error: null,
    next_attempt_at: null,
    delivered_at: null,
    created_at: new Date(NOW - (o.ageDays ?? 0) * DAY_MS).toISOString(),
    replay_of: null,
    payload: JSON.stringify(payload),
    attempt_history: [],
    ...(o.legacy ? {} : subjectOf(payload)),
  };
  return doc;
}

async function storeWith(docs: DeliveryDoc[], collections = webhookEngineCollections) {
  const store = new SqliteReadStore({ path: join(tempDir('wellstream-deliveries-'), 'read.sqlite') });
  await store.ensureCollections(collections);
  await store.applyChanges(docs.map((doc) => ({ op: 'put' as const, collection: DELIVERIES, doc })));
  return store;
}

const types = async (store: SqliteReadStore) => (await store.find<DeliveryDoc>(DELIVERIES, { sort: [['id', 1]] })).map((d) => `${d.event_type}${d.user_id ? `/${d.user_id}` : ''}${d.provider ? `/${d.provider}` : ''}`);

describe('webhook delivery retention (issue 20; docs/webhooks.md "Retention")', () => {
  it('deletes finished deliveries older than the retention period, oldest first; open ones and younger ones stay', async () => {
    const store = await storeWith([
      delivery({ type: 'user.created', user: 'u1', ageDays: 40 }),
      delivery({ type: 'user.created', user: 'u2', ageDays: 31, status: 'parked' }),
      delivery({ type: 'user.created', user: 'u3', ageDays: 31, status: 'pending' }),
      delivery({ type: 'user.created', user: 'u4', ageDays: 29 }),
      delivery({ type: 'webhook.test', ageDays: 45 }),
    ]);
    const retention = new DeliveryRetention({ readStore: store, retentionMs: 30 * DAY_MS, now: () => NOW });
    expect(await retention.runOnce()).toBe(3);
    expect(await types(store)).toEqual(['user.created/u3', 'user.created/u4']);
    expect(await retention.runOnce()).toBe(0);
    // A day later the younger one is past the period too.
    expect(await retention.runOnce(NOW + 2 * DAY_MS)).toBe(1);
    await store.close();
  });

  it('reads by creation time from its index, not every finished delivery: the plan of its read; past a page of open ones it still finds the finished ones after them', async () => {
    const open = Array.from({ length: 1_001 }, () => delivery({ type: 'user.created', user: 'u1', ageDays: 40, status: 'pending' }));
    const store = await storeWith([...open, delivery({ type: 'user.created', user: 'u2', ageDays: 35 }), delivery({ type: 'user.created', user: 'u3', ageDays: 1 })]);
    const plans: string[] = [];
    const prepare = Database.prototype.prepare;
    Database.prototype.prepare = function (this: Database.Database, sql: string) {
      if (/^SELECT/.test(sql) && sql.includes('rm_webhook_deliveries') && sql.includes('f_created_at')) {
        const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => 'x');
        plans.push(((prepare.call(this, `EXPLAIN QUERY PLAN ${sql}`) as Database.Statement<string[]>).all(...params) as { detail: string }[]).map((p) => p.detail).join(' | '));
      }
      return prepare.call(this, sql);
    } as typeof prepare;
    try {
      const retention = new DeliveryRetention({ readStore: store, retentionMs: 30 * DAY_MS, now: () => NOW });
      expect(await retention.runOnce()).toBe(1);
    } finally {
      Database.prototype.prepare = prepare;
    }
    expect(plans.length).toBeGreaterThan(0);
    // The creation-time index (ix0: deliveryDocs.ts), a range of it: every page, the next ones after the cursor too.
    for (const plan of plans) expect(plan).toMatch(/^SEARCH rm_webhook_deliveries USING INDEX rm_webhook_deliveries_ix0 \(f_created_at[=<>]/);
    expect(await store.count(DELIVERIES)).toBe(1_002);
    await store.close();
  });

  it('WEBHOOK_DELIVERY_RETENTION_DAYS defaults to 30 and must be a whole number of days from 1', () => {
    expect(loadConfig({ DATA_DIR: tempDir() } as NodeJS.ProcessEnv).webhookDeliveryRetentionDays).toBe(30);
    expect(loadConfig({ DATA_DIR: tempDir(), WEBHOOK_DELIVERY_RETENTION_DAYS: '7' } as NodeJS.ProcessEnv).webhookDeliveryRetentionDays).toBe(7);
    for (const bad of ['0', '-1', '1.5', 'month']) expect(() => loadConfig({ DATA_DIR: tempDir(), WEBHOOK_DELIVERY_RETENTION_DAYS: bad } as NodeJS.ProcessEnv)).toThrow();
  });
});

describe('webhook deliveries erased with what they describe (issue 20; docs/erasure.md)', () => {
  const settled: number[] = [];
  const erasure = (store: SqliteReadStore) => deliveryErasure({ readStore: store, settle: async (p) => void settled.push(p) });

  it('a user deletion deletes every delivery naming the user but user.deleted, after the engine read up to the erasure; other users’ stay', async () => {
    const store = await storeWith([
      delivery({ type: 'user.created', user: 'gone' }),
      delivery({ type: 'tag.created', user: 'gone' }),
      delivery({ type: 'data.written', user: 'gone', provider: 'device-a' }),
      delivery({ type: 'connection.created', user: 'gone', provider: 'oura' }),
      delivery({ type: 'data.erased', user: 'gone', provider: 'device-b' }),
      delivery({ type: 'user.deleted', user: 'gone' }),
      delivery({ type: 'user.created', user: 'kept' }),
      delivery({ type: 'webhook.test' }),
    ]);
    const e = erasure(store);
    await e.settle(42);
    await e.eraseUser('gone');
    expect(settled).toContain(42);
    expect(await types(store)).toEqual(['user.deleted/gone', 'user.created/kept', 'webhook.test']);
    await store.close();
  });

  it('a provider erasure deletes the user’s data.written and sync.failed deliveries of that provider; the connection’s, other providers’ and other users’ stay', async () => {
    const store = await storeWith([
      delivery({ type: 'data.written', user: 'u', provider: 'device-a' }),
      delivery({ type: 'sync.failed', user: 'u', provider: 'device-a' }),
      delivery({ type: 'connection.created', user: 'u', provider: 'device-a' }),
      delivery({ type: 'data.written', user: 'u', provider: 'device-b' }),
      delivery({ type: 'data.written', user: 'other', provider: 'device-a' }),
    ]);
    await erasure(store).eraseProvider('u', 'device-a');
    expect(await types(store)).toEqual(['connection.created/u/device-a', 'data.written/u/device-b', 'data.written/other/device-a']);
    await store.close();
  });

  it('deliveries stored before they named their user keep through the upgrade and are found by the next retention run (then by erasure)', async () => {
    // The table as the version before made it: no user_id column, no created_at index.
    const before = webhookEngineCollections.map((c) => (c.name === DELIVERIES ? { ...c, indexes: c.indexes!.slice(0, 4), extendInPlace: undefined } : c));
    const path = join(tempDir('wellstream-deliveries-'), 'read.sqlite');
    const old = new SqliteReadStore({ path });
    await old.ensureCollections(before);
    const legacy = [delivery({ type: 'tag.created', user: 'gone', legacy: true }), delivery({ type: 'data.written', user: 'gone', provider: 'device-a', legacy: true }), delivery({ type: 'webhook.test', legacy: true })];
    await old.applyChanges(legacy.map((doc) => ({ op: 'put' as const, collection: DELIVERIES, doc })));
    await old.close();

    const store = new SqliteReadStore({ path });
    expect(await store.ensureCollections(webhookEngineCollections)).toEqual([]);
    expect(await store.count(DELIVERIES)).toBe(3);
    await new DeliveryRetention({ readStore: store, retentionMs: 30 * DAY_MS, now: () => NOW }).runOnce();
    expect(await types(store)).toEqual(['tag.created/gone', 'data.written/gone/device-a', 'webhook.test']);
    await erasure(store).eraseUser('gone');
    expect(await types(store)).toEqual(['webhook.test']);
    await store.close();
  });
});
