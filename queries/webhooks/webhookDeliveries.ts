import { DELIVERIES, deliveryKey, type DeliveryDoc, type DeliveryStatus } from '../../src/webhooks/deliveryDocs.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { findPage, type PageRequest } from '../shared/page.js';

/** The endpoint's deliveries, newest first, optionally of one status (contracts §8). The caller checked the endpoint is the tenant's. */
export function listDeliveries(readStore: ReadStore, endpointId: string, status: DeliveryStatus | undefined, page: PageRequest) {
  return findPage<DeliveryDoc>(readStore, DELIVERIES, { filter: { endpoint_id: endpointId, ...(status ? { status } : {}) }, sort: [['id', -1]] }, page);
}

export async function getDelivery(readStore: ReadStore, endpointId: string, deliveryId: number): Promise<DeliveryDoc | null> {
  return readStore.get<DeliveryDoc>(DELIVERIES, deliveryKey(endpointId, deliveryId));
}

/**
 * Parked deliveries of the endpoint created since `since` and not replayed yet, up to delivery
 * `upTo` (what existed when a recovery began), oldest first: what a recovery after an outage sends
 * again. A replay that parked in its turn is included; its original, replayed already, is not.
 */
export async function parkedSince(readStore: ReadStore, endpointId: string, since: string, upTo: number, limit: number): Promise<DeliveryDoc[]> {
  return readStore.find<DeliveryDoc>(DELIVERIES, {
    filter: { endpoint_id: endpointId, status: 'parked', id: { $lte: upTo }, created_at: { $gte: since }, replayed_at: { $exists: false } },
    sort: [['id', 1]],
    limit,
    fields: ['id'],
  });
}
