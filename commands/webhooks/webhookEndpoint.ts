import type { Event } from '../../src/eventstore/eventStore.js';
import type { StreamState } from '../shared/commandHandler.js';
import type { Snapshots } from '../shared/streamSnapshots.js';

/**
 * One stream per webhook endpoint. It holds the endpoint's configuration and the tenant's
 * requests about its deliveries (tests, replays), so the delivery engine reads them in log order
 * with everything else it turns into deliveries.
 */
export type WebhookEndpointCreated = Event<
  'webhook_endpoint.created',
  {
    endpoint_id: string;
    tenant_id: string;
    url: string;
    description: string;
    /** Empty: every type, including types added later (spec "Webhook endpoint"). */
    event_types: string[];
    /** The `whsec_` secret, sealed (src/webhooks/secretSealing.ts). */
    secret_sealed: string;
    created_at: string;
    by: string;
  }
>;
export type WebhookEndpointUpdated = Event<
  'webhook_endpoint.updated',
  { endpoint_id: string; tenant_id: string; url?: string; description?: string; event_types?: string[]; at: string; by: string }
>;
export type WebhookEndpointDisabled = Event<
  'webhook_endpoint.disabled',
  { endpoint_id: string; tenant_id: string; reason: string; automatic: boolean; at: string; by: string }
>;
export type WebhookEndpointEnabled = Event<'webhook_endpoint.enabled', { endpoint_id: string; tenant_id: string; at: string; by: string }>;
export type WebhookEndpointDeleted = Event<'webhook_endpoint.deleted', { endpoint_id: string; tenant_id: string; at: string; by: string }>;
/** A `webhook.test` event for this endpoint (contracts §8); `event_id` is the test event's id. */
export type WebhookTestRequested = Event<'webhook_endpoint.test_requested', { endpoint_id: string; tenant_id: string; event_id: string; at: string; by: string }>;
/** A new delivery of an earlier delivery's event and payload (spec "Events" 4). */
export type WebhookReplayRequested = Event<
  'webhook_endpoint.replay_requested',
  { endpoint_id: string; tenant_id: string; delivery_id: number; at: string; by: string }
>;
/**
 * The same signing secret sealed again under the current SEALING_KEY (the second half of a
 * rotation, docs/erasure.md). The secret itself never changes: receivers keep verifying.
 */
export type WebhookSecretResealed = Event<'webhook_endpoint.secret_resealed', { endpoint_id: string; tenant_id: string; secret_sealed: string; at: string; by: string }>;

export type WebhookEndpointEvent =
  | WebhookEndpointCreated
  | WebhookEndpointUpdated
  | WebhookEndpointDisabled
  | WebhookEndpointEnabled
  | WebhookEndpointDeleted
  | WebhookTestRequested
  | WebhookReplayRequested
  | WebhookSecretResealed;

export const WEBHOOK_ENDPOINT_EVENT_TYPES: readonly WebhookEndpointEvent['type'][] = [
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.disabled',
  'webhook_endpoint.enabled',
  'webhook_endpoint.deleted',
  'webhook_endpoint.test_requested',
  'webhook_endpoint.replay_requested',
  'webhook_endpoint.secret_resealed',
];

export const webhookEndpointStream = (endpointId: string) => `webhook-${endpointId}`;

export const TENANT_DISABLED_REASON = 'disabled by the tenant';

export type WebhookEndpointState = {
  status: 'none' | 'active' | 'disabled' | 'deleted';
  id: string;
  tenantId: string;
  url: string;
  description: string;
  eventTypes: string[];
  secretSealed: string;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
  /** Since when the endpoint has been taking deliveries: creation, or its last re-enabling. */
  activeSince: string;
};

export const emptyEndpoint = (): WebhookEndpointState => ({
  status: 'none',
  id: '',
  tenantId: '',
  url: '',
  description: '',
  eventTypes: [],
  secretSealed: '',
  disabledReason: null,
  createdAt: '',
  updatedAt: '',
  activeSince: '',
});

/** The endpoint's configuration after one more of its events; the delivery engine folds the same function. */
export function evolveEndpoint(state: WebhookEndpointState, event: WebhookEndpointEvent): WebhookEndpointState {
  const d = event.data;
  switch (event.type) {
    case 'webhook_endpoint.created':
      return {
        status: 'active',
        id: d.endpoint_id,
        tenantId: d.tenant_id,
        url: event.data.url,
        description: event.data.description,
        eventTypes: event.data.event_types,
        secretSealed: event.data.secret_sealed,
        disabledReason: null,
        createdAt: event.data.created_at,
        updatedAt: event.data.created_at,
        activeSince: event.data.created_at,
      };
    case 'webhook_endpoint.updated':
      return {
        ...state,
        url: event.data.url ?? state.url,
        description: event.data.description ?? state.description,
        eventTypes: event.data.event_types ?? state.eventTypes,
        updatedAt: event.data.at,
      };
    case 'webhook_endpoint.disabled':
      return { ...state, status: 'disabled', disabledReason: event.data.reason, updatedAt: event.data.at };
    case 'webhook_endpoint.enabled':
      return { ...state, status: 'active', disabledReason: null, updatedAt: event.data.at, activeSince: event.data.at };
    case 'webhook_endpoint.deleted':
      return { ...state, status: 'deleted', updatedAt: event.data.at };
    case 'webhook_endpoint.secret_resealed':
      // Nothing the tenant configured changed, so updatedAt stays.
      return { ...state, secretSealed: event.data.secret_sealed };
    default:
      return state;
  }
}

/**
 * A snapshot of the endpoint (commands/shared/streamSnapshots.ts): its stream grows with every
 * test and replay request. Its secret is sealed under SEALING_KEY already; nothing in it is a user's.
 */
const endpointSnapshots: Snapshots<WebhookEndpointState> = {
  type: 'snapshot.webhook_endpoint',
  version: 1,
  every: 1000,
  encode: (state) => (state.status === 'none' ? null : { endpoint_id: state.id, tenant_id: state.tenantId, state }),
  decode: (d) => d.state as WebhookEndpointState,
};

export const webhookEndpointState: StreamState<WebhookEndpointState, WebhookEndpointEvent> = {
  snapshots: endpointSnapshots,
  initialState: emptyEndpoint,
  evolve: (state, event) => evolveEndpoint(state, event),
};

/** Another tenant's endpoint, and a deleted one, are indistinguishable from a missing one. */
export function endpointVisibleTo(state: WebhookEndpointState, tenantId: string): boolean {
  return (state.status === 'active' || state.status === 'disabled') && state.tenantId === tenantId;
}

/** Spec "Events" 1: no types means every type. */
export function endpointWants(state: Pick<WebhookEndpointState, 'eventTypes'>, type: string): boolean {
  return state.eventTypes.length === 0 || state.eventTypes.includes(type);
}
