import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TagCreated } from '../../../commands/tags/tag.js';
import { createWebhook } from '../../../commands/webhooks/createWebhook.js';
import { disableWebhookEndpoint } from '../../../commands/webhooks/disableWebhookEndpoint.js';
import { SealingKeyring } from '../../../src/crypto/sealingKeys.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { DeliveryDispatcher } from '../../../src/processes/webhooks/deliveryDispatcher.js';
import { EndpointDirectory } from '../../../src/processes/webhooks/endpointDirectory.js';
import { DELIVERIES, webhookEngineCollections, type DeliveryDoc } from '../../../src/webhooks/deliveryDocs.js';
import type { Enrichment } from '../../../src/webhooks/eventCatalog.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../../../src/webhooks/secretSealing.js';
import { tempDir } from '../../support/tmp.js';
import { eventually } from '../../webhooks/receiver.js';

/**
 * docs/webhooks.md "How it works": an event of a tenant without an active endpoint builds no
 * payload and reads nothing to enrich it; the tenant with one gets its delivery, enriched.
 */
describe('the dispatcher and tenants without active endpoints', () => {
  const dir = tempDir('wellstream-dispatch-tenants-');
  const eventStore = new SqliteEventStore({ path: join(dir, 'events.sqlite'), pollIntervalMs: 20 });
  const readStore = new SqliteReadStore({ path: join(dir, 'read.sqlite') });
  afterAll(async () => {
    await eventStore.close();
    await readStore.close();
  });

  it('enriches and delivers only the events of the tenant whose endpoint is active', async () => {
    const secrets = new WebhookSecrets(new SealingKeyring(randomBytes(32), [], WEBHOOK_SECRET_SEALING));
    const enriched: string[] = [];
    const enrichment: Enrichment = {
      externalRef: async (userId) => (enriched.push(userId), `ref-${userId}`),
      uploadProvider: async () => null,
    };
    const dispatcher = new DeliveryDispatcher(eventStore, readStore, new EndpointDirectory(secrets), enrichment, async () => {});
    await readStore.ensureCollections(webhookEngineCollections);
    const [withEndpoint, withDisabled, without] = [randomUUID(), randomUUID(), randomUUID()];
    const endpointId = randomUUID();
    const at = new Date().toISOString();
    await createWebhook(eventStore, secrets, { tenantId: withEndpoint, endpointId, url: 'http://127.0.0.1:9/hook', eventTypes: ['tag.created'], at, by: 'test' }, { allowPrivateTargets: true });
    const disabledId = randomUUID();
    await createWebhook(eventStore, secrets, { tenantId: withDisabled, endpointId: disabledId, url: 'http://127.0.0.1:9/hook', eventTypes: ['tag.created'], at, by: 'test' }, { allowPrivateTargets: true });
    await disableWebhookEndpoint(eventStore, { endpointId: disabledId, reason: 'test', at });
    await dispatcher.load();
    dispatcher.run();
    try {
      const users = { [withEndpoint]: randomUUID(), [withDisabled]: randomUUID(), [without]: randomUUID() };
      for (const tenantId of [without, withDisabled, withEndpoint]) {
        const tag: TagCreated = {
          type: 'tag.created',
          data: { tag_id: randomUUID(), user_id: users[tenantId]!, tenant_id: tenantId, kind: 'other', label: null, note: null, start: at, end: null, created_at: at },
        };
        await eventStore.appendToStream(`user-${users[tenantId]}`, [tag]);
      }
      const [delivery] = await eventually(async () => {
        const found = await readStore.find<DeliveryDoc>(DELIVERIES, { filter: { endpoint_id: endpointId } });
        return found.length ? found : null;
      });
      expect(JSON.parse(delivery!.payload)).toMatchObject({ type: 'tag.created', data: { user_id: users[withEndpoint], external_ref: `ref-${users[withEndpoint]}` } });
      // The tenants' events came first in the log: the one delivery stored means they were passed over.
      expect(enriched).toEqual([users[withEndpoint]]);
      expect(await readStore.count(DELIVERIES)).toBe(1);
    } finally {
      await dispatcher.stop();
    }
  });
});
