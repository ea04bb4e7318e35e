/**
 * Every event type an endpoint can subscribe to (contracts §8), documented in docs/webhooks.md.
 * A list with no imports, so the console's endpoint form offers the same types the service checks.
 */
export const WEBHOOK_EVENT_TYPES = [
  'data.written',
  'data.erased',
  'user.created',
  'user.deleted',
  'connection.created',
  'connection.needs_reauth',
  'connection.disconnected',
  'connection.health_changed',
  'sync.failed',
  'tag.created',
  'webhook.endpoint_disabled',
  'webhook.test',
  'upload.finished',
] as const;
