import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { newWebhookSecret, type WebhookSecrets } from '../../src/webhooks/secretSealing.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand } from '../shared/commandHandler.js';
import { checkTargetUrl, normaliseEventTypes, WebhookDescription, WebhookEventTypes, WebhookUrl } from './webhookFields.js';
import { webhookEndpointState, webhookEndpointStream, type WebhookEndpointEvent, type WebhookEndpointState } from './webhookEndpoint.js';

export const CreateWebhookInput = z.object({
  tenantId: z.string().uuid(),
  endpointId: z.string().uuid(),
  url: WebhookUrl,
  description: WebhookDescription.optional(),
  eventTypes: WebhookEventTypes.optional(),
  at: z.string().datetime(),
  by: z.string().min(1),
});
export type CreateWebhook = z.infer<typeof CreateWebhookInput>;

export function decideCreateWebhook(cmd: CreateWebhook, secretSealed: string, state: WebhookEndpointState): WebhookEndpointEvent {
  if (state.status !== 'none') throw new DomainError('conflict', 'webhook endpoint already exists');
  return {
    type: 'webhook_endpoint.created',
    data: {
      endpoint_id: cmd.endpointId,
      tenant_id: cmd.tenantId,
      url: cmd.url,
      description: cmd.description ?? '',
      event_types: normaliseEventTypes(cmd.eventTypes),
      secret_sealed: secretSealed,
      created_at: cmd.at,
      by: cmd.by,
    },
  };
}

/** Answers the signing secret in plain once; the log keeps it sealed only. */
export async function createWebhook(eventStore: EventStore, secrets: WebhookSecrets, input: CreateWebhook, options: { allowPrivateTargets: boolean }) {
  const cmd = CreateWebhookInput.parse(input);
  checkTargetUrl(cmd.url, options.allowPrivateTargets);
  const secret = newWebhookSecret();
  const sealed = secrets.seal(secret, cmd.endpointId);
  const result = await handleCommand(eventStore, webhookEndpointStream(cmd.endpointId), webhookEndpointState, (state) => decideCreateWebhook(cmd, sealed, state));
  return { ...result, secret };
}
