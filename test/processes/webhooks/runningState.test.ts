import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhook } from '../../../commands/webhooks/createWebhook.js';
import type { UserRegistered } from '../../../commands/users/user.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import type { Change, UpdateChange } from '../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { SealingKeyring } from '../../../src/crypto/sealingKeys.js';
import { DELIVERIES, type DeliveryDoc } from '../../../src/webhooks/deliveryDocs.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../../../src/webhooks/secretSealing.js';
import { WebhookEngine } from '../../../src/processes/webhooks/webhookEngine.js';
import { tempDir } from '../../support/tmp.js';
import { eventually, Receiver } from '../../webhooks/receiver.js';

/**
 * Spec "Webhook delivery" states `pending`, `running`, `done`, `parked` (docs/webhooks.md
 * "Deliveries"): `running` is stored for an attempt still unanswered after `runningAfterMs`; a
 * quicker answer takes the delivery from `pending` to its outcome in one write.
 */
describe('a delivery is stored as running only while its answer is slow in coming', () => {
  const dir = tempDir('wellstream-webhook-running-');
  const secrets = new WebhookSecrets(new SealingKeyring(randomBytes(32), [], WEBHOOK_SECRET_SEALING));
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  /** An engine on stores of its own, and the delivery-document changes its outcome writes made. */
  async function start(runningAfterMs: number) {
    const name = randomUUID();
    const eventStore = new SqliteEventStore({ path: join(dir, `${name}-events.sqlite`), pollIntervalMs: 20 });
    const readStore = new SqliteReadStore({ path: join(dir, `${name}-read.sqlite`) });
    const outcomes: UpdateChange[] = [];
    const applyChanges = readStore.applyChanges.bind(readStore);
    readStore.applyChanges = (changes: readonly Change[], options) => {
      for (const c of changes) if (c.op === 'update' && c.collection === DELIVERIES) outcomes.push(c);
      return applyChanges(changes, options);
    };
    const r = await Receiver.start();
    const engine = new WebhookEngine({ eventStore, readStore, secrets, allowPrivateTargets: true, limits: { runningAfterMs, perEndpoint: 64 } });
    await engine.start();
    closing.push(async () => {
      r.dropHanging();
      await engine.stop();
      await eventStore.close();
      await readStore.close();
      await r.close();
    });
    const tenantId = randomUUID();
    const endpointId = randomUUID();
    const made = await createWebhook(eventStore, secrets, { tenantId, endpointId, url: r.url('/hook'), eventTypes: ['user.created'], at: new Date().toISOString(), by: 'test' }, { allowPrivateTargets: true });
    r.trust('/hook', made.secret);
    const register = (n: number) => {
      const events: UserRegistered[] = Array.from({ length: n }, (_, i) => ({
        type: 'user.registered',
        data: { user_id: randomUUID(), tenant_id: tenantId, external_ref: `u${i}`, created_at: new Date().toISOString() },
      }));
      return eventStore.appendToStream(`users-${randomUUID()}`, events);
    };
    const stored = () => readStore.find<DeliveryDoc>(DELIVERIES, { filter: { endpoint_id: endpointId } });
    return { r, outcomes, register, stored };
  }

  it('answered before runningAfterMs: one outcome write per delivery, pending → done, never running', async () => {
    const { r, outcomes, register, stored } = await start(3_600_000);
    r.answer = () => 'hang';
    await register(30);
    // Every attempt in flight, and longer than a window of outcome writes (10 ms) went by: nothing
    // of theirs is written while they wait for their answers.
    await r.waitFor(() => r.held === 30);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(outcomes).toEqual([]);
    r.releaseHanging(30, 204);
    await eventually(async () => (await stored()).filter((d) => d.status === 'done').length === 30);
    expect(r.received.filter((x) => x.verified === null)).toEqual([]);
    expect(outcomes.filter((c) => c.set?.status === 'running')).toEqual([]);
    const perDelivery = new Map<string, number>();
    for (const c of outcomes) perDelivery.set(c.id, (perDelivery.get(c.id) ?? 0) + 1);
    expect([...perDelivery.values()]).toEqual(Array(30).fill(1));
    for (const d of await stored()) expect(d).toMatchObject({ status: 'done', attempts: 1, last_status_code: 204 });
  });

  it('unanswered after runningAfterMs: stored as running (attempts still 0), then done once the answer comes', async () => {
    const { r, register, stored } = await start(0);
    r.answer = () => 'hang';
    await register(1);
    const running = await eventually(async () => (await stored()).find((d) => d.status === 'running'));
    expect(running).toMatchObject({ attempts: 0, attempt_history: [] });
    r.releaseHanging(1, 204);
    const done = await eventually(async () => (await stored()).find((d) => d.status === 'done'));
    expect(done).toMatchObject({ _id: running._id, attempts: 1, last_status_code: 204 });
  });
});
