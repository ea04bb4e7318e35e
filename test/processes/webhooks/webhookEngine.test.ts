import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhook } from '../../../commands/webhooks/createWebhook.js';
import type { UserRegistered } from '../../../commands/users/user.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { SealingKeyring } from '../../../src/crypto/sealingKeys.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../../../src/webhooks/secretSealing.js';
import { WebhookEngine } from '../../../src/processes/webhooks/webhookEngine.js';
import { tempDir } from '../../support/tmp.js';
import { Receiver } from '../../webhooks/receiver.js';

/**
 * The engine on its own, with tiny bounds, so that what does not fit in memory has to come back
 * from the store: every delivery still arrives.
 */
describe('the delivery engine beyond its in-memory bounds', () => {
  const dir = tempDir('wellstream-webhook-engine-');
  const eventStore = new SqliteEventStore({ path: join(dir, 'events.sqlite'), pollIntervalMs: 20 });
  const readStore = new SqliteReadStore({ path: join(dir, 'read.sqlite') });
  const secrets = new WebhookSecrets(new SealingKeyring(randomBytes(32), [], WEBHOOK_SECRET_SEALING));
  let engine: WebhookEngine;
  let r: Receiver;

  beforeAll(async () => {
    r = await Receiver.start();
    engine = new WebhookEngine({
      eventStore,
      readStore,
      secrets,
      allowPrivateTargets: true,
      scheduleSeconds: [0, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05],
      limits: { perEndpoint: 2, total: 3, queuedPerEndpoint: 5, queued: 8 },
    });
    await engine.start();
  });
  afterAll(async () => {
    await engine.stop();
    await eventStore.close();
    await readStore.close();
    await r.close();
  });

  it('delivers every event to every endpoint when the backlog is many times the bounds (issue 9: bounded concurrency per endpoint and overall)', async () => {
    const tenantId = randomUUID();
    const paths = ['/e1', '/e2', '/e3'];
    for (const path of paths) {
      const made = await createWebhook(eventStore, secrets, { tenantId, endpointId: randomUUID(), url: r.url(path), eventTypes: ['user.created'], at: new Date().toISOString(), by: 'test' }, { allowPrivateTargets: true });
      r.trust(path, made.secret);
    }
    // /e2 fails the first attempt of every event, so retries come back through the store too.
    const seen = new Set<string>();
    r.answer = (x) => {
      const id = x.headers['webhook-id'] as string;
      if (x.path !== '/e2' || seen.has(id)) return { status: 204 };
      seen.add(id);
      return { status: 503 };
    };
    const n = 40;
    const events: UserRegistered[] = Array.from({ length: n }, (_, i) => ({
      type: 'user.registered',
      data: { user_id: randomUUID(), tenant_id: tenantId, external_ref: `u${i}`, created_at: new Date().toISOString() },
    }));
    await eventStore.appendToStream(`bench-${tenantId}`, events);
    const okAt = (path: string) => new Set(r.at(path).filter((x) => x.verified !== null).map((x) => x.headers['webhook-id'] as string));
    await r.waitFor(() => paths.every((p) => okAt(p).size === n), 20_000);
    expect(r.received.filter((x) => x.verified === null)).toEqual([]);
    for (const p of paths) expect(okAt(p).size).toBe(n);
  });
});
