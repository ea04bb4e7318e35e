import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand } from '../shared/commandHandler.js';
import { endpointVisibleTo, webhookEndpointState, webhookEndpointStream, type WebhookEndpointEvent, type WebhookEndpointState } from './webhookEndpoint.js';

export const DeleteWebhookInput = z.object({ tenantId: z.string().uuid(), endpointId: z.string().uuid(), at: z.string().datetime(), by: z.string().min(1) });
export type DeleteWebhook = z.infer<typeof DeleteWebhookInput>;

/** Contracts §8: the endpoint goes; the engine parks its pending deliveries. */
export function decideDeleteWebhook(cmd: DeleteWebhook, state: WebhookEndpointState): WebhookEndpointEvent {
  if (!endpointVisibleTo(state, cmd.tenantId)) throw new DomainError('not_found', 'webhook endpoint not found');
  return { type: 'webhook_endpoint.deleted', data: { endpoint_id: cmd.endpointId, tenant_id: cmd.tenantId, at: cmd.at, by: cmd.by } };
}

export async function deleteWebhook(eventStore: EventStore, input: DeleteWebhook) {
  const cmd = DeleteWebhookInput.parse(input);
  return handleCommand(eventStore, webhookEndpointStream(cmd.endpointId), webhookEndpointState, (state) => decideDeleteWebhook(cmd, state));
}
