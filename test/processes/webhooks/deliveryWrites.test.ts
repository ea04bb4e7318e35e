import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { SealingKeyring } from '../../../src/crypto/sealingKeys.js';
import type { ApplyBatch, Change } from '../../../src/readstore/readStore.js';
import { DISPATCHER_CHECKPOINT } from '../../../src/processes/webhooks/deliveryDispatcher.js';
import type { WorkerLimits } from '../../../src/processes/webhooks/deliveryLimits.js';
import { DELIVERIES } from '../../../src/webhooks/deliveryDocs.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../../../src/webhooks/secretSealing.js';
import { tempDir } from '../../support/tmp.js';
import { eventually } from '../../webhooks/receiver.js';
import { oneEndpointEngine } from './oneEndpointEngine.js';

/**
 * docs/webhooks.md "What one delivery costs the store": the dispatcher sends a batch's deliveries
 * before storing it and waits a short while for their answers, so a delivery answered meanwhile
 * has its row written once, created with its outcome. Contracts §5 (at least once): the
 * dispatcher's checkpoint passes an event only together with its deliveries' rows, so a batch
 * that is not stored after its POSTs went out sends them again; nothing is lost.
 */
describe('a delivery answered before its batch is stored is written once, with its outcome', () => {
  const dir = tempDir('wellstream-webhook-writes-');
  const secrets = new WebhookSecrets(new SealingKeyring(randomBytes(32), [], WEBHOOK_SECRET_SEALING));
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  type Write = { via: 'batch' | 'changes'; change: Change };

  /**
   * An engine on stores of its own; every write of a delivery row, by its id; `failNextBatch`
   * makes the next dispatcher batch that creates delivery rows fail (answering the checkpoint it
   * found then).
   */
  async function start(limits: Partial<WorkerLimits>) {
    const writes = new Map<string, Write[]>();
    const note = (via: Write['via'], changes: readonly Change[]) => {
      for (const c of changes) if (c.op === 'update' && c.collection === DELIVERIES) writes.set(c.id, [...(writes.get(c.id) ?? []), { via, change: c }]);
    };
    let failing: ((checkpoint: number) => void) | null = null;
    const engine = await oneEndpointEngine({
      dir,
      secrets,
      limits,
      watch: (readStore) => {
        const applyBatch = readStore.applyBatch.bind(readStore);
        readStore.applyBatch = async (batch: ApplyBatch) => {
          const creates = batch.changes.some((c) => c.op === 'update' && c.collection === DELIVERIES && c.upsert);
          if (failing && batch.projection === DISPATCHER_CHECKPOINT && creates) {
            const fail = failing;
            failing = null;
            fail((await readStore.getCheckpoint(DISPATCHER_CHECKPOINT))?.position ?? 0);
            throw new Error('read store failed');
          }
          await applyBatch(batch);
          note('batch', batch.changes);
        };
        const applyChanges = readStore.applyChanges.bind(readStore);
        readStore.applyChanges = async (changes, options) => {
          await applyChanges(changes, options);
          note('changes', changes);
        };
      },
    });
    closing.push(engine.close);
    const failNextBatch = () => new Promise<number>((resolve) => (failing = resolve));
    return { ...engine, writes, failNextBatch };
  }

  it('answered within the wait: each row is created done, attempts 1, and never updated after', async () => {
    // A wait longer than any answer here: the batch is stored once every delivery of it was answered.
    const { r, writes, register, stored } = await start({ answersWaitMs: 600_000, perEndpoint: 64 });
    await register(20);
    const done = await eventually(async () => {
      const docs = await stored();
      return docs.length === 20 && docs.every((d) => d.status === 'done') ? docs : null;
    });
    expect(r.received).toHaveLength(20);
    expect(r.received.filter((x) => x.verified === null)).toEqual([]);
    for (const d of done) {
      expect(d).toMatchObject({ attempts: 1, last_status_code: 204, next_attempt_at: null });
      expect(d.attempt_history.map((a) => a.status_code)).toEqual([204]);
      const rowWrites = writes.get(d._id) ?? [];
      expect(rowWrites.map((w) => w.via)).toEqual(['batch']);
      expect(rowWrites[0]!.change).toMatchObject({ upsert: true, setOnInsert: { status: 'done', attempts: 1 } });
    }
  });

  it('a batch not stored after its POSTs leaves the checkpoint before its events, and they are sent again', async () => {
    const { r, writes, register, stored, failNextBatch } = await start({ answersWaitMs: 600_000 });
    const failed = failNextBatch();
    const head = await register(1);
    // The attempt was made and answered; the batch carrying its row then failed.
    expect(await failed).toBeLessThan(head);
    const [d] = await eventually(async () => {
      const docs = await stored();
      return docs.length === 1 && docs[0]!.status === 'done' ? docs : null;
    });
    // Sent twice, the same event both times (receivers de-duplicate on webhook-id).
    expect(r.received).toHaveLength(2);
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
    expect(r.received.filter((x) => x.verified === null)).toEqual([]);
    // What is stored is the second sending's outcome, in the row's one write.
    expect(d).toMatchObject({ attempts: 1, last_status_code: 204 });
    expect((writes.get(d!._id) ?? []).map((w) => w.via)).toEqual(['batch']);
  });

  it('unanswered when the wait ends: the row is stored pending, and the answer is a second write', async () => {
    const { r, writes, register, stored } = await start({ answersWaitMs: 0 });
    r.answer = () => 'hang';
    await register(1);
    await r.waitFor(() => r.held === 1);
    const pending = await eventually(async () => (await stored())[0]);
    expect(pending).toMatchObject({ status: 'pending', attempts: 0 });
    r.releaseHanging(1, 204);
    const done = await eventually(async () => {
      const [d] = await stored();
      return d?.status === 'done' ? d : null;
    });
    expect(done).toMatchObject({ _id: pending._id, attempts: 1, last_status_code: 204 });
    const rowWrites = writes.get(done._id) ?? [];
    expect(rowWrites.map((w) => w.via)).toEqual(['batch', 'changes']);
    expect(rowWrites[0]!.change).toMatchObject({ setOnInsert: { status: 'pending', attempts: 0 } });
  });
});
