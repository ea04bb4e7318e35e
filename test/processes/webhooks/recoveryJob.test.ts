import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createWebhook } from '../../../commands/webhooks/createWebhook.js';
import { webhookEndpointStream } from '../../../commands/webhooks/webhookEndpoint.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import type { EventStore } from '../../../src/eventstore/eventStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { SealingKeyring } from '../../../src/crypto/sealingKeys.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../../../src/webhooks/secretSealing.js';
import { DELIVERIES, webhookEngineCollections, type DeliveryDoc } from '../../../src/webhooks/deliveryDocs.js';
import { recoveryJobHandler, type RecoverPayload } from '../../../src/processes/webhooks/recoveryJob.js';
import type { JobContext } from '../../../src/processes/jobs/jobHandler.js';
import type { Job, Json } from '../../../src/workqueue/workQueue.js';
import { tempDir } from '../../support/tmp.js';

describe('parked-delivery recovery as a job (issue 26, point 3: recovery is a job, not a request)', () => {
  const dir = tempDir('wellstream-webhook-recovery-');
  const events = new SqliteEventStore({ path: join(dir, 'events.sqlite'), pollIntervalMs: 20 });
  const readStore = new SqliteReadStore({ path: join(dir, 'read.sqlite') });
  const secrets = new WebhookSecrets(new SealingKeyring(randomBytes(32), [], WEBHOOK_SECRET_SEALING));
  afterAll(async () => {
    await events.close();
    await readStore.close();
  });

  /** Counts the reads of the endpoint's stream and the events appended to it. */
  const counting = () => {
    const seen = { reads: 0, appends: [] as number[] };
    const store: EventStore = Object.create(events) as EventStore;
    store.readStream = (name, o) => {
      seen.reads++;
      return events.readStream(name, o);
    };
    store.appendToStream = (name, evs, o) => {
      seen.appends.push(evs.length);
      return events.appendToStream(name, evs, o);
    };
    return { store, seen };
  };
  const contextOf = (payload: RecoverPayload, progress: Json = null): JobContext & { saved: Json[] } => {
    const saved: Json[] = [];
    const job = { id: randomUUID(), kind: 'webhook.recover', payload, progress } as unknown as Job;
    return { job, lease: () => { throw new Error('unused'); }, signal: new AbortController().signal, saved, renew: async (p?: Json) => void (p !== undefined && saved.push(p)) };
  };

  it('replays 2,500 parked deliveries once each, in chunks of at most 1,000, reading the endpoint stream once; run again, it replays nothing', async () => {
    await readStore.ensureCollections(webhookEngineCollections);
    const tenantId = randomUUID();
    const endpointId = randomUUID();
    const at = new Date().toISOString();
    await createWebhook(events, secrets, { tenantId, endpointId, url: 'https://receiver.example/hook', eventTypes: [], at, by: 'test' }, { allowPrivateTargets: true });
    const n = 2500;
    const doc = (id: number, status: DeliveryDoc['status']): DeliveryDoc => ({
      _id: `${endpointId}:${id}`, id, endpoint_id: endpointId, tenant_id: tenantId, event_id: randomUUID(), event_type: 'user.created', status, attempts: 8,
      last_status_code: 500, last_error: 'receiver answered 500', next_attempt_at: null, delivered_at: null, created_at: at, replay_of: null, payload: '{}', attempt_history: [],
    });
    const docs = Array.from({ length: n }, (_, i) => doc(i + 1, 'parked'));
    // One delivered and one past the request's log position: not part of it.
    docs.push(doc(n + 1, 'done'), doc(n + 10_000, 'parked'));
    await readStore.applyChanges(docs.map((d) => ({ op: 'put' as const, collection: DELIVERIES, doc: d })));
    const payload: RecoverPayload = { tenantId, endpointId, since: new Date(Date.parse(at) - 1000).toISOString(), upTo: n + 1, at, by: 'test' };

    const { store, seen } = counting();
    const ctx = contextOf(payload);
    await recoveryJobHandler({ eventStore: store, readStore }).run(ctx);
    expect(seen.reads).toBe(1);
    expect(seen.appends).toEqual([1000, 1000, 500]);
    const stream = await events.readStream(webhookEndpointStream(endpointId));
    const asked = stream.filter((e) => e.type === 'webhook_endpoint.replay_requested').map((e) => (e.data as { delivery_id: number }).delivery_id);
    expect(asked).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(ctx.saved.at(-1)).toEqual({ after: n });

    // The read model has not caught up (no replayed_at): the stream says what was replayed.
    const again = counting();
    await recoveryJobHandler({ eventStore: again.store, readStore }).run(contextOf(payload));
    expect(again.seen.appends).toEqual([]);
    // Resumed part-way after a crash that lost the last renewal: nothing replayed twice.
    const resumed = counting();
    await recoveryJobHandler({ eventStore: resumed.store, readStore }).run(contextOf(payload, { after: 1500 }));
    expect(resumed.seen.appends).toEqual([]);
  });
});
