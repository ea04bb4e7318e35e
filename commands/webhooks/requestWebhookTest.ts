import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand } from '../shared/commandHandler.js';
import { endpointVisibleTo, webhookEndpointState, webhookEndpointStream, type WebhookEndpointEvent, type WebhookEndpointState } from './webhookEndpoint.js';

export const RequestWebhookTestInput = z.object({ tenantId: z.string().uuid(), endpointId: z.string().uuid(), at: z.string().datetime(), by: z.string().min(1) });
export type RequestWebhookTest = z.infer<typeof RequestWebhookTestInput>;

/** Contracts §8: one `webhook.test` event for this endpoint. A disabled endpoint takes no deliveries, tests included. */
export function decideWebhookTest(cmd: RequestWebhookTest, state: WebhookEndpointState, eventId: string): WebhookEndpointEvent {
  if (!endpointVisibleTo(state, cmd.tenantId)) throw new DomainError('not_found', 'webhook endpoint not found');
  if (state.status !== 'active') throw new DomainError('conflict', 'webhook endpoint is disabled; enable it first (PATCH enabled: true)');
  return { type: 'webhook_endpoint.test_requested', data: { endpoint_id: cmd.endpointId, tenant_id: cmd.tenantId, event_id: eventId, at: cmd.at, by: cmd.by } };
}

export async function requestWebhookTest(eventStore: EventStore, input: RequestWebhookTest) {
  const cmd = RequestWebhookTestInput.parse(input);
  const eventId = randomUUID();
  return handleCommand(eventStore, webhookEndpointStream(cmd.endpointId), webhookEndpointState, (state) => decideWebhookTest(cmd, state, eventId));
}
