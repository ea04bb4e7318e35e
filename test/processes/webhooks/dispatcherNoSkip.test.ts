import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { UserRegistered } from '../../../commands/users/user.js';
import { createWebhook } from '../../../commands/webhooks/createWebhook.js';
import { SealingKeyring } from '../../../src/crypto/sealingKeys.js';
import type { EventStore } from '../../../src/eventstore/eventStore.js';
import { KurrentDBEventStore } from '../../../src/eventstore/kurrentDBEventStore.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import type { ApplyBatch, ReadStore } from '../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { DeliveryDispatcher, DISPATCHER_CHECKPOINT } from '../../../src/processes/webhooks/deliveryDispatcher.js';
import { DELIVERIES, deliveryKey, webhookEngineCollections, type DeliveryDoc } from '../../../src/webhooks/deliveryDocs.js';
import { EndpointDirectory } from '../../../src/processes/webhooks/endpointDirectory.js';
import { eventLogEnrichment } from '../../../src/processes/webhooks/enrichment.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../../../src/webhooks/secretSealing.js';
import { tempDir } from '../../support/tmp.js';

/**
 * docs/webhooks.md: "no event is skipped", on every event store. The dispatcher reads the log
 * as the projections do, a catch-up subscription from its own checkpoint in the read store
 * (issue 25: no longer a persistent subscription on KurrentDB, which parks a message after ten
 * retries, redelivers out of order and keeps a second checkpoint on the server). Here the read
 * store fails ten batches half-way (half of the deliveries written, the checkpoint unmoved), and
 * every event still ends as exactly one delivery.
 */
const dir = tempDir('wellstream-dispatch-');
let n = 0;

dispatcherNoSkip('embedded SQLite', async () => new SqliteEventStore({ path: join(dir, `events-${n++}.sqlite`), pollIntervalMs: 20 }));
const url = inject('eventstoreUrl');
if (url) dispatcherNoSkip('KurrentDB', async () => new KurrentDBEventStore({ connectionString: url }));
else describe.skip('webhook dispatcher on KurrentDB (no Docker engine or EVENTSTORE_URL)', () => it('skipped', () => {}));

function dispatcherNoSkip(name: string, make: () => Promise<EventStore>) {
  describe(`webhook dispatcher on ${name}: no event is skipped (docs/webhooks.md, issue 25)`, () => {
    it('turns every event into one delivery although the read store fails mid-batch ten times', async () => {
      const eventStore = await make();
      const readStore = new SqliteReadStore({ path: join(dir, `read-${n++}.sqlite`) });
      const flaky = failingMidBatch(readStore, 10);
      const secrets = new WebhookSecrets(new SealingKeyring(randomBytes(32), [], WEBHOOK_SECRET_SEALING));
      const dispatcher = new DeliveryDispatcher(eventStore, flaky.store, new EndpointDirectory(secrets), eventLogEnrichment(eventStore), async () => {}, undefined, undefined, 20);
      try {
        await readStore.ensureCollections(webhookEngineCollections);
        // A shared server holds other tests' events: start at its head.
        await readStore.setCheckpoint(DISPATCHER_CHECKPOINT, await eventStore.headPosition(), 'live');
        const tenantId = randomUUID();
        const endpointId = randomUUID();
        await createWebhook(eventStore, secrets, { tenantId, endpointId, url: 'http://127.0.0.1:9/hook', eventTypes: ['user.created'], at: new Date().toISOString(), by: 'test' }, { allowPrivateTargets: true });
        await dispatcher.load();
        dispatcher.run();

        const positions: number[] = [];
        for (let batch = 0; batch < 30; batch++) {
          const events: UserRegistered[] = Array.from({ length: 10 }, (_, i) => ({
            type: 'user.registered',
            data: { user_id: randomUUID(), tenant_id: tenantId, external_ref: `u${batch}-${i}`, created_at: new Date().toISOString() },
          }));
          await eventStore.appendToStream(`user-${randomUUID()}`, events);
          positions.push(...(await eventStore.readAll({ after: positions.at(-1) ?? 0, filter: { eventTypes: ['user.registered'], streamPrefixes: ['user-'] }, maxCount: 10_000 })).filter((e) => e.data.tenant_id === tenantId).map((e) => e.globalPosition));
        }
        expect(positions).toHaveLength(300);

        const last = positions.at(-1)!;
        const deadline = Date.now() + 60_000;
        while (((await readStore.getCheckpoint(DISPATCHER_CHECKPOINT))?.position ?? 0) < last) {
          if (Date.now() > deadline) throw new Error('the dispatcher did not reach the last event');
          await new Promise((r) => setTimeout(r, 20));
        }
        expect(flaky.failures()).toBe(10);
        const deliveries = await readStore.find<DeliveryDoc>(DELIVERIES, { filter: { endpoint_id: endpointId } });
        expect(deliveries.map((d) => d._id).sort()).toEqual(positions.map((p) => deliveryKey(endpointId, p)).sort());
        expect(new Set(deliveries.map((d) => d.event_id)).size).toBe(300);
      } finally {
        await dispatcher.stop();
        await eventStore.close();
        await readStore.close();
      }
    }, 90_000);
  });
}

/**
 * The read store with every other dispatcher batch failing half-way, `times` times: the first
 * half of its changes is written, the checkpoint stays where it was, and the batch throws (what a
 * crash in the middle of a MongoDB batch leaves behind).
 */
function failingMidBatch(inner: ReadStore, times: number): { store: ReadStore; failures: () => number } {
  let failures = 0;
  let calls = 0;
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'applyBatch') {
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (batch: ApplyBatch) => {
        calls += 1;
        if (batch.projection === DISPATCHER_CHECKPOINT && failures < times && calls % 2 === 1 && batch.changes.length >= 2) {
          failures += 1;
          await target.applyChanges(batch.changes.slice(0, Math.floor(batch.changes.length / 2)));
          throw new Error(`read store failed mid-batch (${failures} of ${times})`);
        }
        return target.applyBatch(batch);
      };
    },
  });
  return { store, failures: () => failures };
}
