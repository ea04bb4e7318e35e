import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Change, UpdateChange } from '../../../src/readstore/readStore.js';
import { SealingKeyring } from '../../../src/crypto/sealingKeys.js';
import { DELIVERIES } from '../../../src/webhooks/deliveryDocs.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../../../src/webhooks/secretSealing.js';
import { tempDir } from '../../support/tmp.js';
import { eventually } from '../../webhooks/receiver.js';
import { oneEndpointEngine } from './oneEndpointEngine.js';

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
    const outcomes: UpdateChange[] = [];
    const engine = await oneEndpointEngine({
      dir,
      secrets,
      limits: { runningAfterMs, perEndpoint: 64 },
      watch: (readStore) => {
        const applyChanges = readStore.applyChanges.bind(readStore);
        readStore.applyChanges = (changes: readonly Change[], options) => {
          for (const c of changes) if (c.op === 'update' && c.collection === DELIVERIES) outcomes.push(c);
          return applyChanges(changes, options);
        };
      },
    });
    closing.push(engine.close);
    return { ...engine, outcomes };
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
