import type { WebhookEndpointEvent } from '../../commands/webhooks/webhookEndpoint.js';
import { defineProjection } from '../../src/projector/projection.js';

/** The tenant's view of its endpoints; health (failing_since, last_success_at) is the engine's, in webhook_endpoint_health. */
export type WebhookEndpointDoc = {
  _id: string;
  id: string;
  tenant_id: string;
  url: string;
  description: string;
  event_types: string[];
  status: 'active' | 'disabled';
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
};

export const WEBHOOK_ENDPOINTS = 'webhook_endpoints';

export const webhookEndpointsProjection = defineProjection<WebhookEndpointEvent>({
  name: 'webhook_endpoints',
  collections: [{ name: WEBHOOK_ENDPOINTS, indexes: [{ fields: [['tenant_id', 1], ['created_at', 1]] }] }],
  eventTypes: ['webhook_endpoint.created', 'webhook_endpoint.updated', 'webhook_endpoint.disabled', 'webhook_endpoint.enabled', 'webhook_endpoint.deleted'],
  evolve: (event) => {
    const d = event.data;
    switch (event.type) {
      case 'webhook_endpoint.created':
        return [
          {
            op: 'put',
            collection: WEBHOOK_ENDPOINTS,
            doc: {
              _id: d.endpoint_id,
              id: d.endpoint_id,
              tenant_id: d.tenant_id,
              url: event.data.url,
              description: event.data.description,
              event_types: event.data.event_types,
              status: 'active',
              disabled_reason: null,
              created_at: event.data.created_at,
              updated_at: event.data.created_at,
            },
          },
        ];
      case 'webhook_endpoint.updated': {
        const set: Record<string, unknown> = { updated_at: event.data.at };
        if (event.data.url !== undefined) set.url = event.data.url;
        if (event.data.description !== undefined) set.description = event.data.description;
        if (event.data.event_types !== undefined) set.event_types = event.data.event_types;
        return [{ op: 'update', collection: WEBHOOK_ENDPOINTS, id: d.endpoint_id, set }];
      }
      case 'webhook_endpoint.disabled':
        return [{ op: 'update', collection: WEBHOOK_ENDPOINTS, id: d.endpoint_id, set: { status: 'disabled', disabled_reason: event.data.reason, updated_at: event.data.at } }];
      case 'webhook_endpoint.enabled':
        return [{ op: 'update', collection: WEBHOOK_ENDPOINTS, id: d.endpoint_id, set: { status: 'active', disabled_reason: null, updated_at: event.data.at } }];
      case 'webhook_endpoint.deleted':
        return [{ op: 'delete', collection: WEBHOOK_ENDPOINTS, id: d.endpoint_id }];
      default:
        return [];
    }
  },
});
