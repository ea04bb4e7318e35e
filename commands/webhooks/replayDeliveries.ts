import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand } from '../shared/commandHandler.js';
import { endpointVisibleTo, webhookEndpointState, webhookEndpointStream, type WebhookEndpointEvent, type WebhookEndpointState } from './webhookEndpoint.js';

export const ReplayDeliveriesInput = z.object({
  tenantId: z.string().uuid(),
  endpointId: z.string().uuid(),
  /** Deliveries of this endpoint, known to exist (the caller read them). */
  deliveryIds: z.array(z.number().int().nonnegative()).max(1000),
  at: z.string().datetime(),
  by: z.string().min(1),
});
export type ReplayDeliveries = z.infer<typeof ReplayDeliveriesInput>;

/**
 * Spec "Events" 4: each replay is a new delivery of the same event and payload naming its
 * original. One event per replayed delivery: its position in the log is the new delivery's id.
 */
export function decideReplayDeliveries(cmd: ReplayDeliveries, state: WebhookEndpointState): WebhookEndpointEvent[] {
  if (!endpointVisibleTo(state, cmd.tenantId)) throw new DomainError('not_found', 'webhook endpoint not found');
  if (state.status !== 'active') throw new DomainError('conflict', 'webhook endpoint is disabled; enable it first (PATCH enabled: true)');
  return cmd.deliveryIds.map((deliveryId) => ({
    type: 'webhook_endpoint.replay_requested',
    data: { endpoint_id: cmd.endpointId, tenant_id: cmd.tenantId, delivery_id: deliveryId, at: cmd.at, by: cmd.by },
  }));
}

export async function replayDeliveries(eventStore: EventStore, input: ReplayDeliveries) {
  const cmd = ReplayDeliveriesInput.parse(input);
  return handleCommand(eventStore, webhookEndpointStream(cmd.endpointId), webhookEndpointState, (state) => decideReplayDeliveries(cmd, state));
}
