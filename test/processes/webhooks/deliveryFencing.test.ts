import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhook } from '../../../commands/webhooks/createWebhook.js';
import type { UserRegistered } from '../../../commands/users/user.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import type { Lease, LeaseStore } from '../../../src/readstore/leases.js';
import { SealingKeyring } from '../../../src/crypto/sealingKeys.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../../../src/webhooks/secretSealing.js';
import { DISPATCHER_CHECKPOINT } from '../../../src/processes/webhooks/deliveryDispatcher.js';
import { WebhookEngine } from '../../../src/processes/webhooks/webhookEngine.js';
import { DELIVERIES, type DeliveryDoc } from '../../../src/webhooks/deliveryDocs.js';
import { tempDir } from '../../support/tmp.js';
import { eventually } from '../../webhooks/receiver.js';

type Held = { req: IncomingMessage; res: ServerResponse; at: number };

/** A receiver whose answers the test gives by hand. */
async function manualReceiver(): Promise<{ server: Server; url: string; held: Held[] }> {
  const held: Held[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => held.push({ req, res, at: Date.now() }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, held };
}

/** A holder frozen in the belief that it still holds its lease: its renewals write nothing and always "succeed". */
function frozenRenewals(store: LeaseStore): LeaseStore {
  return { acquire: (...a) => store.acquire(...a), renew: async (lease: Lease) => lease, release: (l) => store.release(l), remove: (l) => store.remove(l), get: (n) => store.get(n) };
}

/** A holder whose renewals are refused from the moment `fail` is set. */
function failingRenewals(store: LeaseStore, fail: { now: boolean }): LeaseStore {
  return { acquire: (...a) => store.acquire(...a), renew: async (l, ttl, now) => (fail.now ? null : store.renew(l, ttl, now)), release: (l) => store.release(l), remove: (l) => store.remove(l), get: (n) => store.get(n) };
}

describe('delivery outcomes are fenced by the webhooks lease (issue 26, point 2: fenced outcomes; attempts stop the moment a renewal fails)', () => {
  const dir = tempDir('wellstream-webhook-fencing-');
  const eventStore = new SqliteEventStore({ path: join(dir, 'events.sqlite'), pollIntervalMs: 20 });
  const readStore = new SqliteReadStore({ path: join(dir, 'read.sqlite') });
  const secrets = new WebhookSecrets(new SealingKeyring(randomBytes(32), [], WEBHOOK_SECRET_SEALING));
  const engines: WebhookEngine[] = [];
  let rx: Awaited<ReturnType<typeof manualReceiver>>;

  const engine = (holder: string, store: LeaseStore, leaseMs = 400) => {
    const e = new WebhookEngine({ eventStore, readStore, secrets, allowPrivateTargets: true, leases: { store, holder, leaseMs, renewMs: 100 } });
    engines.push(e);
    return e;
  };
  const oneDelivery = async () => {
    const tenantId = randomUUID();
    const endpointId = randomUUID();
    await createWebhook(eventStore, secrets, { tenantId, endpointId, url: rx.url, eventTypes: ['user.created'], at: new Date().toISOString(), by: 'test' }, { allowPrivateTargets: true });
    const ev: UserRegistered = { type: 'user.registered', data: { user_id: randomUUID(), tenant_id: tenantId, external_ref: 'u', created_at: new Date().toISOString() } };
    await eventStore.appendToStream(`fencing-${tenantId}`, [ev]);
    return endpointId;
  };
  const deliveryOf = async (endpointId: string) => (await readStore.find<DeliveryDoc>(DELIVERIES, { filter: { endpoint_id: endpointId } }))[0] ?? null;

  beforeAll(async () => {
    rx = await manualReceiver();
  });
  afterAll(async () => {
    for (const e of engines) await e.stop();
    for (const h of rx.held) h.res.destroy();
    rx.server.close();
    await eventStore.close();
    await readStore.close();
  });

  it('a process whose lease was taken writes no outcome, and the new holder’s outcome stands', async () => {
    const store = readStore.leases!();
    const a = engine('A', frozenRenewals(store), 1500);
    await a.start();
    const endpointId = await oneDelivery();
    // A sends and waits for the answer; meanwhile its lease runs out unrenewed and B takes it.
    await eventually(async () => rx.held.length === 1);
    const fromA = rx.held[0]!;
    const b = engine('B', store);
    await b.start();
    await eventually(async () => rx.held.length === 2, 10_000);
    const fromB = rx.held[1]!;
    fromB.res.writeHead(204).end();
    const done = await eventually(async () => {
      const d = await deliveryOf(endpointId);
      return d?.status === 'done' ? d : null;
    });
    // A's answer comes last, a failure: A must not record it over B's success.
    fromA.res.writeHead(500).end();
    await new Promise((r) => setTimeout(r, 300));
    const after = await deliveryOf(endpointId);
    expect(after).toEqual(done);
    expect(after!.attempts).toBe(1);
    expect(after!.attempt_history.map((h) => h.status_code)).toEqual([204]);
    // B's lease is the stored one, one generation past A's.
    expect((await store.get(DISPATCHER_CHECKPOINT))?.holder).toBe('B');
    await b.stop();
    await a.stop();
  });

  it('a renewal refused aborts the attempt in flight and nothing of it is written', async () => {
    const store = readStore.leases!();
    const fail = { now: false };
    const c = engine('C', failingRenewals(store, fail));
    await c.start();
    const before = rx.held.length;
    const endpointId = await oneDelivery();
    await eventually(async () => rx.held.length === before + 1);
    const held = rx.held[before]!;
    const closed = new Promise<void>((resolve) => held.res.on('close', () => resolve()));
    const running = await deliveryOf(endpointId);
    fail.now = true;
    // The request is cut off from the sender's side once the keeper's renewal is refused.
    await closed;
    await new Promise((r) => setTimeout(r, 300));
    const after = await deliveryOf(endpointId);
    expect(after?.attempts).toBe(0);
    expect(after?.attempt_history).toEqual([]);
    expect(after?.status).toBe(running?.status);
    for (const h of rx.held) h.res.destroy();
    await c.stop();
  });
});
