import type { ReadStore, Scalar } from '../../readstore/readStore.js';
import { DELIVERIES, subjectOf, type DeliveryDoc, type WebhookPayloadData } from '../../webhooks/deliveryDocs.js';

/** Marks, as a checkpoint, that every delivery names its user: the pass below runs no more. */
export const SUBJECTS_FILLED = 'webhook-delivery-subjects';
const PAGE = 500;

/**
 * Deliveries stored before deliveries named their user and provider (DeliveryDoc `user_id`,
 * `provider`) get them from their body, once: a user's deletion and a provider erasure find them
 * by these like any other. Pages in key order, with a turn for other work between them; a pass
 * cut short (`stopping`) starts over at the next run and skips what it filled.
 */
export async function fillDeliverySubjects(readStore: ReadStore, stopping: () => boolean): Promise<void> {
  if (await readStore.getCheckpoint(SUBJECTS_FILLED)) return;
  let after: Scalar[] | undefined;
  for (;;) {
    if (stopping()) return;
    const page = await readStore.find<DeliveryDoc>(DELIVERIES, { filter: { user_id: { $exists: false } }, sort: [['_id', 1]], limit: PAGE, after, fields: ['payload'] });
    if (page.length) {
      await readStore.applyChanges(
        page.map((d) => ({ op: 'update' as const, collection: DELIVERIES, id: d._id, set: subjectOf(JSON.parse(d.payload) as { data: WebhookPayloadData }) })),
      );
    }
    if (page.length < PAGE) break;
    after = [page[page.length - 1]!._id];
    await new Promise((resolve) => setImmediate(resolve));
  }
  await readStore.setCheckpoint(SUBJECTS_FILLED, 1, 'live');
}
