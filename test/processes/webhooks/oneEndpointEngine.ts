import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createWebhook } from '../../../commands/webhooks/createWebhook.js';
import type { UserRegistered } from '../../../commands/users/user.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import type { WorkerLimits } from '../../../src/processes/webhooks/deliveryLimits.js';
import { WebhookEngine } from '../../../src/processes/webhooks/webhookEngine.js';
import { DELIVERIES, type DeliveryDoc } from '../../../src/webhooks/deliveryDocs.js';
import type { WebhookSecrets } from '../../../src/webhooks/secretSealing.js';
import { Receiver } from '../../webhooks/receiver.js';

/**
 * A webhook engine on stores of its own, with one endpoint (for `user.created`) on a receiver of
 * its own. `watch` sees the read store before the engine starts (to record or fail its writes).
 * `register(n)` appends n user registrations and answers the log's head after them; `stored()`
 * reads the endpoint's deliveries; `close()` stops everything.
 */
export async function oneEndpointEngine(options: { dir: string; secrets: WebhookSecrets; limits: Partial<WorkerLimits>; watch?: (readStore: SqliteReadStore) => void }) {
  const { dir, secrets, limits } = options;
  const name = randomUUID();
  const eventStore = new SqliteEventStore({ path: join(dir, `${name}-events.sqlite`), pollIntervalMs: 20 });
  const readStore = new SqliteReadStore({ path: join(dir, `${name}-read.sqlite`) });
  options.watch?.(readStore);
  const r = await Receiver.start();
  const engine = new WebhookEngine({ eventStore, readStore, secrets, allowPrivateTargets: true, limits });
  await engine.start();
  const close = async () => {
    r.dropHanging();
    await engine.stop();
    await eventStore.close();
    await readStore.close();
    await r.close();
  };
  const tenantId = randomUUID();
  const endpointId = randomUUID();
  const made = await createWebhook(eventStore, secrets, { tenantId, endpointId, url: r.url('/hook'), eventTypes: ['user.created'], at: new Date().toISOString(), by: 'test' }, { allowPrivateTargets: true });
  r.trust('/hook', made.secret);
  const register = async (n: number) => {
    const events: UserRegistered[] = Array.from({ length: n }, (_, i) => ({
      type: 'user.registered',
      data: { user_id: randomUUID(), tenant_id: tenantId, external_ref: `u${i}`, created_at: new Date().toISOString() },
    }));
    await eventStore.appendToStream(`users-${randomUUID()}`, events);
    return eventStore.headPosition();
  };
  const stored = () => readStore.find<DeliveryDoc>(DELIVERIES, { filter: { endpoint_id: endpointId } });
  return { r, register, stored, close };
}
