import type { EventStore } from '../../src/eventstore/eventStore.js';
import { handleCommand } from '../shared/commandHandler.js';
import { webhookEndpointState, webhookEndpointStream, type WebhookEndpointEvent, type WebhookEndpointState } from './webhookEndpoint.js';

export type DisableWebhookEndpoint = { endpointId: string; reason: string; at: string };

/**
 * The engine's own decision (spec "States: Webhook endpoint": active → disabled when a delivery
 * runs out of attempts and nothing was accepted for 5 days). An endpoint no longer active is left
 * as it is, so a repeat after a crash appends nothing.
 */
export function decideDisableWebhookEndpoint(cmd: DisableWebhookEndpoint, state: WebhookEndpointState): WebhookEndpointEvent[] {
  if (state.status !== 'active') return [];
  return [
    {
      type: 'webhook_endpoint.disabled',
      data: { endpoint_id: cmd.endpointId, tenant_id: state.tenantId, reason: cmd.reason, automatic: true, at: cmd.at, by: 'webhook-engine' },
    },
  ];
}

export function disableWebhookEndpoint(eventStore: EventStore, cmd: DisableWebhookEndpoint) {
  return handleCommand(eventStore, webhookEndpointStream(cmd.endpointId), webhookEndpointState, (state) => decideDisableWebhookEndpoint(cmd, state));
}
