import type { CollectionSpec } from '../readstore/readStore.js';
import type { WebhookEndpointState } from '../../commands/webhooks/webhookEndpoint.js';

/** Spec "Webhook delivery": one attempt as kept in `attempt_history`. */
export type AttemptRecord = {
  id: number;
  attempt: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body_excerpt: string | null;
};

/** A delivery's states, in the order the API documents them (also the route's enum). */
export const DELIVERY_STATUSES = ['pending', 'running', 'done', 'parked'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * A delivery of one event to one endpoint. Its `id` is the position in the event log of what
 * caused it (the domain event, or the tenant's test or replay request): unique per endpoint, and
 * the same whenever the engine builds it again after a restart.
 */
export type DeliveryDoc = {
  _id: string;
  id: number;
  endpoint_id: string;
  tenant_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
  replay_of: number | null;
  /** Set on an original once a replay of it was made (recovery replays each parked delivery once). */
  replayed_at?: string | null;
  /** The exact body of every attempt, as sent. */
  payload: string;
  attempt_history: AttemptRecord[];
  /**
   * Whom and what the body names (its `data.user_id` and `data.provider`, null when it names
   * none): a user's deletion, or a provider erasure, deletes the deliveries about it. Absent on
   * deliveries stored before they were kept (deliverySubjects.ts fills them in).
   */
  user_id?: string | null;
  provider?: string | null;
};

export type WebhookPayloadData = Record<string, unknown>;

/** The user and provider a delivery's body names (DeliveryDoc `user_id`, `provider`). */
export function subjectOf(payload: { data: WebhookPayloadData }): { user_id: string | null; provider: string | null } {
  const { user_id: userId, provider } = payload.data;
  return { user_id: typeof userId === 'string' ? userId : null, provider: typeof provider === 'string' ? provider : null };
}

/** Kept by the engine beside the endpoint (spec "Webhook endpoint": failing_since, last_success_at). */
export type EndpointHealthDoc = { _id: string; failing_since: string | null; last_success_at: string | null };

/** The engine's own copy of each endpoint, written with its checkpoint (what it delivered against). */
export type DispatchEndpointDoc = { _id: string; state: WebhookEndpointState };

export const DELIVERIES = 'webhook_deliveries';
export const ENDPOINT_HEALTH = 'webhook_endpoint_health';
export const DISPATCH_ENDPOINTS = 'webhook_dispatch_endpoints';

export const deliveryKey = (endpointId: string, id: number) => `${endpointId}:${id}`;

export const webhookEngineCollections: readonly CollectionSpec[] = [
  {
    name: DELIVERIES,
    // Every index costs each delivery's creation, and those with `status` its outcome too; the
    // endpoint's own ones cost most, each endpoint writing its own leaf pages of each (issue 37,
    // docs/webhooks.md "What one delivery costs the store"). Each serves a read:
    indexes: [
      // Retention (deliveryRetention.ts). First: an index's place is its name in the embedded
      // store, and a place whose index changed is built again when the table is extended
      // (sqliteTable.ts extensionSql); here it took the place of (endpoint_id, id), which the
      // list of every status needed before it merged the lists of each status (listDeliveries).
      { fields: [['created_at', 1]] },
      // The endpoint's list of one status, newest first (each status's for the list of all);
      // recoveries (parked ones by id).
      { fields: [['endpoint_id', 1], ['status', 1], ['id', -1]] },
      // The worker's polls of what came due, every endpoint; the next retry's time.
      { fields: [['status', 1], ['next_attempt_at', 1]] },
      // The worker's refills of one endpoint's due deliveries, and its parking of them.
      { fields: [['endpoint_id', 1], ['status', 1], ['next_attempt_at', 1]] },
      // Erasure: a user's deliveries.
      { fields: [['user_id', 1]] },
    ],
    columns: ['tenant_id', 'created_at', 'replayed_at'],
    // Deliveries are no projection: a new version keeps them.
    extendInPlace: true,
  },
  { name: ENDPOINT_HEALTH },
  { name: DISPATCH_ENDPOINTS },
];
