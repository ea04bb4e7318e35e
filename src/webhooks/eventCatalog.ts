import type { DataWritten, EtlJobFailed, EtlJobParked, UploadFinished } from '../../commands/ingestion/upload.js';
import type { DataErased, UserDeleted } from '../../commands/deletions/erasureEvents.js';
import type { TagCreated } from '../../commands/tags/tag.js';
import type { UserRegistered } from '../../commands/users/user.js';
import type { ConnectionDisconnected, ConnectionEstablished, ConnectionNeedsReauth } from '../../commands/connections/connection.js';
import type { SyncRunFailed } from '../../commands/sync/syncRun.js';
import type { SyncHealthChanged } from '../../commands/sync/connectionSync.js';
import type { WebhookEndpointDisabled } from '../../commands/webhooks/webhookEndpoint.js';
import type { RecordedEvent } from '../eventstore/eventStore.js';
import { deterministicId } from '../shared/ids.js';
import { WEBHOOK_EVENT_TYPES } from '../catalog/webhookEventTypes.js';

export { WEBHOOK_EVENT_TYPES };
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (t: string): t is WebhookEventType => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t);

/** The body every attempt of a delivery sends, byte for byte (spec "Events"). */
export type WebhookPayload = { id: string; type: WebhookEventType; timestamp: string; test: boolean; data: Record<string, unknown> };

/** What the engine needs to know about a domain event to deliver it: whose it is and what it says. */
export type WebhookEvent = { tenantId: string; payload: WebhookPayload };

/** Facts a domain event does not carry itself, read from the event log (src/processes/webhooks/enrichment.ts). */
export type Enrichment = {
  externalRef: (userId: string) => Promise<string | null>;
  /** The provider of the upload whose stream this is. */
  uploadProvider: (streamName: string) => Promise<string | null>;
};

type Source = RecordedEvent<
  | UserRegistered
  | UserDeleted
  | TagCreated
  | DataWritten
  | DataErased
  | EtlJobFailed
  | EtlJobParked
  | UploadFinished
  | WebhookEndpointDisabled
  | ConnectionEstablished
  | ConnectionNeedsReauth
  | ConnectionDisconnected
  | SyncRunFailed
  | SyncHealthChanged
>;

/**
 * The domain events that mean a webhook event, and the webhook event each one means. Types
 * whose cause does not exist yet (connections, time tags) are wired where that capability lands,
 * by adding its domain event here.
 */
export const WEBHOOK_SOURCE_TYPES: readonly Source['type'][] = [
  'user.registered',
  'user.deleted',
  'data.written',
  'data.erased',
  'etl.job_failed',
  'etl.job_parked',
  'upload.finished',
  'webhook_endpoint.disabled',
  'tag.created',
  'connection.established',
  'connection.needs_reauth',
  'connection.disconnected',
  'sync.run_failed',
  'connection_sync.health_changed',
];

export async function toWebhookEvent(event: RecordedEvent, enrich: Enrichment): Promise<WebhookEvent | null> {
  const e = event as Source;
  const out = (type: WebhookEventType, tenantId: string, data: Record<string, unknown>): WebhookEvent => ({
    tenantId,
    payload: { id: deterministicId(event.id, 'webhook'), type, timestamp: event.createdAt.toISOString(), test: false, data },
  });
  switch (e.type) {
    case 'user.registered':
      return out('user.created', e.data.tenant_id, { user_id: e.data.user_id, external_ref: e.data.external_ref });
    case 'user.deleted':
      // The end of the user's deletion job, which recorded the external_ref before erasing.
      return out('user.deleted', e.data.tenant_id, { user_id: e.data.user_id, external_ref: e.data.external_ref, job_id: e.data.job_id });
    case 'data.written':
      return out('data.written', e.data.tenant_id, {
        user_id: e.data.user_id,
        external_ref: await enrich.externalRef(e.data.user_id),
        provider: e.data.provider,
        records: e.data.records,
        types: e.data.types,
        first_day: e.data.first_day,
        last_day: e.data.last_day,
      });
    case 'data.erased':
      return out('data.erased', e.data.tenant_id, {
        user_id: e.data.user_id,
        external_ref: e.data.external_ref,
        provider: e.data.provider,
        job_id: e.data.job_id,
        records_deleted: e.data.records_deleted,
      });
    case 'etl.job_failed':
    case 'etl.job_parked': {
      const parked = e.type === 'etl.job_parked';
      return out('sync.failed', e.data.tenant_id, {
        user_id: e.data.user_id,
        external_ref: await enrich.externalRef(e.data.user_id),
        provider: await enrich.uploadProvider(event.streamName),
        reason: parked ? 'processing_parked' : 'processing_failed',
        last_error: e.data.error,
        consecutive_failures: e.data.attempt,
        retry_at: parked ? null : (e.data as EtlJobFailed['data']).next_attempt_at,
      });
    }
    case 'upload.finished':
      // contracts §12: an upload or import reached done, failed or parked.
      return out('upload.finished', e.data.tenant_id, {
        user_id: e.data.user_id,
        external_ref: await enrich.externalRef(e.data.user_id),
        provider: e.data.provider,
        upload_id: e.data.upload_id,
        status: e.data.status,
        records: e.data.records,
        unchanged: e.data.unchanged,
        rejected: e.data.rejected,
      });
    case 'tag.created':
      return out('tag.created', e.data.tenant_id, { user_id: e.data.user_id, external_ref: await enrich.externalRef(e.data.user_id), tag_id: e.data.tag_id });
    case 'connection.established': {
      const base = { user_id: e.data.user_id, external_ref: await enrich.externalRef(e.data.user_id), provider: e.data.provider };
      // A reconnect after needs_reauth makes the connection healthy again: news about its health, not a new connection.
      if (e.data.reconnect) return out('connection.health_changed', e.data.tenant_id, { ...base, reason: 'reconnected', action: null, retry_at: null });
      return out('connection.created', e.data.tenant_id, base);
    }
    case 'connection.needs_reauth':
      return out('connection.needs_reauth', e.data.tenant_id, {
        user_id: e.data.user_id,
        external_ref: await enrich.externalRef(e.data.user_id),
        provider: e.data.provider,
        reason: e.data.reason,
        action: 'reconnect',
        last_error: e.data.error,
      });
    case 'connection.disconnected':
      return out('connection.disconnected', e.data.tenant_id, {
        user_id: e.data.user_id,
        external_ref: await enrich.externalRef(e.data.user_id),
        provider: e.data.provider,
        reason: e.data.reason,
      });
    case 'sync.run_failed':
      // A pull that spent its attempts or was refused; its retries in between are not news.
      return out('sync.failed', e.data.tenant_id, {
        user_id: e.data.user_id,
        external_ref: await enrich.externalRef(e.data.user_id),
        provider: e.data.provider,
        reason: e.data.reason === 'refused' ? 'provider_refused' : e.data.reason === 'not_enabled' ? 'provider_not_enabled' : e.data.reason === 'rejected' ? 'request_rejected' : 'pull_failed',
        last_error: e.data.error,
        consecutive_failures: e.data.attempts,
        retry_at: null,
        sync_run_id: e.data.run_id,
      });
    case 'connection_sync.health_changed': {
      if (!e.data.announce) return null;
      const { health, previous } = e.data;
      // Broken since when the trouble began; on recovery, how long it lasted.
      const brokenSince = health.healthy ? (previous && !previous.healthy ? previous.since : null) : health.since;
      return out('connection.health_changed', e.data.tenant_id, {
        user_id: e.data.user_id,
        external_ref: await enrich.externalRef(e.data.user_id),
        provider: e.data.provider,
        healthy: health.healthy,
        reason: health.reason,
        action: health.action,
        retry_at: health.retry_at,
        previous_reason: previous?.reason ?? null,
        broken_since: brokenSince,
        broken_seconds: brokenSince ? Math.max(0, Math.floor((Date.parse(e.data.at) - Date.parse(brokenSince)) / 1000)) : 0,
      });
    }
    case 'webhook_endpoint.disabled':
      // The tenant knows when it disabled an endpoint itself; only the engine's own decision is news.
      if (!e.data.automatic) return null;
      return out('webhook.endpoint_disabled', e.data.tenant_id, { endpoint_id: e.data.endpoint_id, reason: e.data.reason });
    default:
      return null;
  }
}

/** The body of a test delivery (contracts §8: `test` true, type `webhook.test`). */
export function testPayload(eventId: string, endpointId: string, at: string): WebhookPayload {
  return { id: eventId, type: 'webhook.test', timestamp: at, test: true, data: { endpoint_id: endpointId } };
}
