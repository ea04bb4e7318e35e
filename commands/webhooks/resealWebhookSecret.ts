import type { EventStore } from '../../src/eventstore/eventStore.js';
import type { WebhookSecrets } from '../../src/webhooks/secretSealing.js';
import { handleCommand } from '../shared/commandHandler.js';
import { webhookEndpointState, webhookEndpointStream, type WebhookEndpointEvent, type WebhookEndpointState } from './webhookEndpoint.js';

export type ResealWebhookSecret = { endpointId: string; at: string };

/**
 * `resealed` is the endpoint's secret sealed under the current SEALING_KEY, or null when it
 * already is. A deleted endpoint's secret is left as it is: nothing signs with it again.
 */
export function decideResealWebhookSecret(cmd: ResealWebhookSecret, state: WebhookEndpointState, resealed: string | null): WebhookEndpointEvent[] {
  if (resealed === null || (state.status !== 'active' && state.status !== 'disabled')) return [];
  return [
    {
      type: 'webhook_endpoint.secret_resealed',
      data: { endpoint_id: cmd.endpointId, tenant_id: state.tenantId, secret_sealed: resealed, at: cmd.at, by: 'sealing-key-rotation' },
    },
  ];
}

/**
 * Seals the endpoint's signing secret again under the current SEALING_KEY (docs/erasure.md,
 * "Rotating SEALING_KEY"). `live` counts endpoints not deleted; a repeat reseals nothing.
 */
export async function resealWebhookSecret(eventStore: EventStore, secrets: WebhookSecrets, cmd: ResealWebhookSecret): Promise<{ live: boolean; resealed: boolean }> {
  const result = await handleCommand(eventStore, webhookEndpointStream(cmd.endpointId), webhookEndpointState, (state) => {
    const live = state.status === 'active' || state.status === 'disabled';
    const resealed = live && !secrets.isCurrent(state.secretSealed) ? secrets.seal(secrets.open(state.secretSealed, cmd.endpointId), cmd.endpointId) : null;
    return decideResealWebhookSecret(cmd, state, resealed);
  });
  return { live: result.state.status === 'active' || result.state.status === 'disabled', resealed: result.newEvents.length > 0 };
}
