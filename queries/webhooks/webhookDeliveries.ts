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

