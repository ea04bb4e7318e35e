import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhooks/webhookEndpointsProjection.js';
import { ENDPOINT_HEALTH, type EndpointHealthDoc } from '../../src/webhooks/deliveryDocs.js';
import type { ReadStore } from '../../src/readstore/readStore.js';

/** Spec "Webhook endpoint" without the secret: configuration and the engine's health of it. */
export type WebhookEndpointView = WebhookEndpointDoc & { failing_since: string | null; last_success_at: string | null };

async function withHealth(readStore: ReadStore, docs: WebhookEndpointDoc[]): Promise<WebhookEndpointView[]> {
  if (docs.length === 0) return [];
  const health = await readStore.find<EndpointHealthDoc>(ENDPOINT_HEALTH, { filter: { _id: { $in: docs.map((d) => d.id) } } });
  const byId = new Map(health.map((h) => [h._id, h]));
  return docs.map((d) => ({ ...d, failing_since: byId.get(d.id)?.failing_since ?? null, last_success_at: byId.get(d.id)?.last_success_at ?? null }));
}

/** The tenant's endpoints, oldest first, all on one page (spec "Webhooks"). */
export async function listWebhooks(readStore: ReadStore, tenantId: string): Promise<WebhookEndpointView[]> {
  const docs = await readStore.find<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS, { filter: { tenant_id: tenantId }, sort: [['created_at', 1]] });
  return withHealth(readStore, docs);
}

/** One endpoint of the tenant; another tenant's is null like a missing one. */
export async function getWebhook(readStore: ReadStore, tenantId: string, endpointId: string): Promise<WebhookEndpointView | null> {
  const doc = await readStore.get<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS, endpointId);
  if (!doc || doc.tenant_id !== tenantId) return null;
  return (await withHealth(readStore, [doc]))[0]!;
}
