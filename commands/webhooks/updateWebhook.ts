import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand } from '../shared/commandHandler.js';
import { checkTargetUrl, normaliseEventTypes, WebhookDescription, WebhookEventTypes, WebhookUrl } from './webhookFields.js';
import {
  endpointVisibleTo,
  TENANT_DISABLED_REASON,
  webhookEndpointState,
  webhookEndpointStream,
  type WebhookEndpointEvent,
  type WebhookEndpointState,
} from './webhookEndpoint.js';

export const UpdateWebhookInput = z.object({
  tenantId: z.string().uuid(),
  endpointId: z.string().uuid(),
  url: WebhookUrl.optional(),
  description: WebhookDescription.optional(),
  eventTypes: WebhookEventTypes.optional(),
  enabled: z.boolean().optional(),
  at: z.string().datetime(),
  by: z.string().min(1),
});
export type UpdateWebhook = z.infer<typeof UpdateWebhookInput>;

/**
 * Contracts §8: `enabled: false` disables with reason "disabled by the tenant" (its pending
 * deliveries are parked by the engine); `enabled: true` makes it active again for new events
 * only. A field given with its current value changes nothing and appends nothing.
 */
export function decideUpdateWebhook(cmd: UpdateWebhook, state: WebhookEndpointState): WebhookEndpointEvent[] {
  if (!endpointVisibleTo(state, cmd.tenantId)) throw new DomainError('not_found', 'webhook endpoint not found');
  const base = { endpoint_id: cmd.endpointId, tenant_id: cmd.tenantId, at: cmd.at, by: cmd.by };
  const events: WebhookEndpointEvent[] = [];
  const change: { url?: string; description?: string; event_types?: string[] } = {};
  if (cmd.url !== undefined && cmd.url !== state.url) change.url = cmd.url;
  if (cmd.description !== undefined && cmd.description !== state.description) change.description = cmd.description;
  if (cmd.eventTypes !== undefined) {
    const types = normaliseEventTypes(cmd.eventTypes);
    if (types.join(',') !== state.eventTypes.join(',')) change.event_types = types;
  }
  if (Object.keys(change).length) events.push({ type: 'webhook_endpoint.updated', data: { ...base, ...change } });
  if (cmd.enabled === false && state.status === 'active') {
    events.push({ type: 'webhook_endpoint.disabled', data: { ...base, reason: TENANT_DISABLED_REASON, automatic: false } });
  }
  if (cmd.enabled === true && state.status === 'disabled') events.push({ type: 'webhook_endpoint.enabled', data: base });
  return events;
}

export async function updateWebhook(eventStore: EventStore, input: UpdateWebhook, options: { allowPrivateTargets: boolean }) {
  const cmd = UpdateWebhookInput.parse(input);
  if (cmd.url !== undefined) checkTargetUrl(cmd.url, options.allowPrivateTargets);
  return handleCommand(eventStore, webhookEndpointStream(cmd.endpointId), webhookEndpointState, (state) => decideUpdateWebhook(cmd, state));
}
