import type { Logger } from 'pino';
import type { DeliveryErasure } from '../../commands/deletions/erasureSteps.js';
import type { ReadStore } from '../readstore/readStore.js';
import { DELIVERIES } from './deliveryDocs.js';

/** How long an erasure waits for the delivery engine to read its events before it goes on without. */
export const DELIVERY_SETTLE_MS = 60_000;

/**
 * Webhook deliveries go with what they describe (docs/erasure.md, docs/webhooks.md):
 *
 * - a user's deletion deletes every delivery naming the user, but the `user.deleted`
 *   announcement itself (and its replays), which the tenant needs to hear and which is kept, like
 *   every delivery, until retention (WEBHOOK_DELIVERY_RETENTION_DAYS);
 * - a provider erasure deletes the user's `data.written` deliveries of that provider (they list
 *   the erased record types and days) and its `sync.failed` and `upload.finished` ones (they
 *   describe its uploads and pulls). The connection's deliveries stay while the user does, like its consent history.
 *
 * Both wait first until the engine has made the deliveries of every event up to the erasure, so
 * none about the erased data is made after. An engine that lags longer than a minute is not
 * waited for (the erasure goes on): what it delivers later about the data stays until retention.
 */
export function deliveryErasure(o: { readStore: ReadStore; settle: (position: number, timeoutMs: number) => Promise<void>; log?: Logger; waitMs?: number }): DeliveryErasure {
  return {
    settle: async (position) => {
      try {
        await o.settle(position, o.waitMs ?? DELIVERY_SETTLE_MS);
      } catch (err) {
        o.log?.warn({ err, position }, 'the webhook engine has not read up to an erasure; its later deliveries about the erased data stay until retention');
      }
    },
    eraseUser: (userId) => o.readStore.applyChanges([{ op: 'deleteMany', collection: DELIVERIES, filter: { user_id: userId, event_type: { $ne: 'user.deleted' } } }], { erasing: true }),
    eraseProvider: (userId, provider) =>
      o.readStore.applyChanges([{ op: 'deleteMany', collection: DELIVERIES, filter: { user_id: userId, provider, event_type: { $in: ['data.written', 'sync.failed', 'upload.finished'] } } }], { erasing: true }),
  };
}
