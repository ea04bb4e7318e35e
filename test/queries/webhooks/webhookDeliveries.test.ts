import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { DELIVERIES, DELIVERY_STATUSES, webhookEngineCollections, type DeliveryDoc, type DeliveryStatus } from '../../../src/webhooks/deliveryDocs.js';
import { listDeliveries } from '../../../queries/webhooks/webhookDeliveries.js';
import type { CollectionSpec, Scalar } from '../../../src/readstore/readStore.js';
import { tempDir } from '../../support/tmp.js';

const delivery = (endpoint: string, id: number, status: DeliveryStatus): DeliveryDoc => ({
  _id: `${endpoint}:${id}`,
  id,
  endpoint_id: endpoint,
  tenant_id: 't',
  event_id: `e${id}`,
  event_type: 'data.written',
  status,
  attempts: 0,
  last_status_code: null,
  last_error: null,
  next_attempt_at: status === 'done' || status === 'parked' ? null : '2026-12-07T00:00:00.000Z',
  delivered_at: null,
  created_at: '2026-12-07T00:00:00.000Z',
  replay_of: null,
  payload: '{}',
  attempt_history: [],
  user_id: 'u',
  provider: 'device-a',
});

/** The deliveries' indexes before issue 37's cut: (endpoint_id, id) led the list. */
const before: CollectionSpec = {
  ...webhookEngineCollections[0]!,
  indexes: [
    { fields: [['endpoint_id', 1], ['id', -1]] },
    { fields: [['endpoint_id', 1], ['status', 1], ['id', -1]] },
    { fields: [['status', 1], ['next_attempt_at', 1]] },
    { fields: [['endpoint_id', 1], ['status', 1], ['next_attempt_at', 1]] },
    { fields: [['user_id', 1]] },
    { fields: [['created_at', 1]] },
  ],
};

describe('webhook deliveries list', () => {
  it('the list of every status is each status newest first, merged: the same pages, in the same order, as one list by id would give', async () => {
    const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
    await store.ensureCollections(webhookEngineCollections);
    // Statuses in runs and alone, another endpoint's deliveries between them.
    const statuses: DeliveryStatus[] = ['done', 'done', 'done', 'parked', 'pending', 'done', 'running', 'running', 'parked', 'done', 'done', 'pending', 'pending', 'pending', 'done', 'parked', 'done'];
    await store.applyChanges([
      ...statuses.map((s, i) => ({ op: 'put' as const, collection: DELIVERIES, doc: delivery('ep1', 10 + i * 3, s) })),
      ...statuses.map((s, i) => ({ op: 'put' as const, collection: DELIVERIES, doc: delivery('ep2', 11 + i * 3, s) })),
    ]);
    const expected = statuses.map((_, i) => 10 + i * 3).reverse();
    for (const limit of [1, 3, 4, 17, 100]) {
      const seen: number[] = [];
      let after: Scalar[] | null = null;
      for (let pages = 0; pages < 20; pages++) {
        const page = await listDeliveries(store, 'ep1', undefined, { limit, after });
        expect(page.items.length).toBeLessThanOrEqual(limit);
        seen.push(...page.items.map((d) => d.id));
        after = page.next;
        if (!after) break;
      }
      expect(seen, `limit ${limit}`).toEqual(expected);
    }
    for (const status of DELIVERY_STATUSES) {
      const page = await listDeliveries(store, 'ep1', status, { limit: 100 });
      expect(page.items.map((d) => d.id)).toEqual(expected.filter((id) => statuses[(id - 10) / 3] === status));
    }
    await store.close();
  });

  it('an embedded store of the earlier shape keeps its deliveries and drops the index of the list by id alone (each one a write of every delivery)', async () => {
    const path = join(tempDir(), 'read.sqlite');
    const old = new SqliteReadStore({ path });
    await old.ensureCollections([before, ...webhookEngineCollections.slice(1)]);
    await old.applyChanges(DELIVERY_STATUSES.map((s, i) => ({ op: 'put' as const, collection: DELIVERIES, doc: delivery('ep1', i + 1, s) })));
    await old.close();

    const store = new SqliteReadStore({ path });
    expect(await store.ensureCollections(webhookEngineCollections)).toEqual([]);
    expect((await listDeliveries(store, 'ep1', undefined, { limit: 10 })).items.map((d) => d.id)).toEqual([4, 3, 2, 1]);
    expect((await listDeliveries(store, 'ep1', 'parked', { limit: 10 })).items.map((d) => d.id)).toEqual([4]);
    await store.close();
    const db = new Database(path, { readonly: true });
    const indexes = db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'rm_webhook_deliveries' AND sql IS NOT NULL ORDER BY name").all() as { name: string; sql: string }[];
    db.close();
    expect(indexes.map((ix) => ix.sql.replace(/^CREATE INDEX \S+ ON \S+ /, ''))).toEqual([
      '("f_created_at" ASC)',
      '("f_endpoint_id" ASC, "f_status" ASC, "f_id" DESC)',
      '("f_status" ASC, "f_next_attempt_at" ASC)',
      '("f_endpoint_id" ASC, "f_status" ASC, "f_next_attempt_at" ASC)',
      '("f_user_id" ASC)',
    ]);
  });
});
