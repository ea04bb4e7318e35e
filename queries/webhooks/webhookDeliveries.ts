import { DELIVERIES, DELIVERY_STATUSES, deliveryKey, type DeliveryDoc, type DeliveryStatus } from '../../src/webhooks/deliveryDocs.js';
import type { ReadStore, SortSpec } from '../../src/readstore/readStore.js';
import { findPage, type Page, type PageRequest } from '../shared/page.js';

const NEWEST_FIRST: SortSpec = [['id', -1]];

/**
 * The endpoint's deliveries, newest first, optionally of one status (contracts §8). The caller
 * checked the endpoint is the tenant's. The endpoint's index by status gives each status in id
 * order (deliveryDocs.ts), so the list of every status is the newest of each status merged: a
 * page of n reads at most n + 1 of each (four short index ranges), where an index of its own for
 * this list cost every delivery's creation one more index write (issue 37).
 */
export async function listDeliveries(readStore: ReadStore, endpointId: string, status: DeliveryStatus | undefined, page: PageRequest): Promise<Page<DeliveryDoc>> {
  const ofStatus = (s: DeliveryStatus) => findPage<DeliveryDoc>(readStore, DELIVERIES, { filter: { endpoint_id: endpointId, status: s }, sort: NEWEST_FIRST }, page);
  if (status) return ofStatus(status);
  const pages = await Promise.all(DELIVERY_STATUSES.map(ofStatus));
  const merged = pages.flatMap((p) => p.items).sort((a, b) => b.id - a.id || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0));
  const items = merged.slice(0, page.limit);
  const last = items[items.length - 1];
  const more = merged.length > page.limit || pages.some((p) => p.next !== null);
  return { items, next: more && last ? [last.id, last._id] : null };
}

export async function getDelivery(readStore: ReadStore, endpointId: string, deliveryId: number): Promise<DeliveryDoc | null> {
  return readStore.get<DeliveryDoc>(DELIVERIES, deliveryKey(endpointId, deliveryId));
}
