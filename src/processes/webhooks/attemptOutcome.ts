import type { AttemptRecord, DeliveryDoc } from '../../webhooks/deliveryDocs.js';
import { ATTEMPTS_KEPT } from './deliveryLimits.js';
import type { EndpointDirectory } from './endpointDirectory.js';
import type { EndpointHealth } from './endpointHealth.js';
import type { AttemptResult } from './httpSender.js';
import { MAX_ATTEMPTS, type RetrySchedule } from './retrySchedule.js';

export type OutcomeDeps = { health: EndpointHealth; endpoints: EndpointDirectory; schedule: RetrySchedule };

/**
 * What an attempt's result makes of its delivery (spec "Webhook delivery": done, retried on the
 * schedule, or parked after the 8th failure or once its endpoint no longer takes deliveries), the
 * endpoint's health told of it: the fields to store and when the next attempt is due (null: none).
 */
export function attemptOutcome(deps: OutcomeDeps, d: DeliveryDoc, r: AttemptResult, startedAt: number, at: number): { set: Partial<DeliveryDoc>; retryAt: number | null } {
  const attempt = d.attempts + 1;
  const entry: AttemptRecord = {
    // At most 8 attempts per delivery: this numbering is unique within the endpoint.
    id: d.id * MAX_ATTEMPTS + (attempt - 1),
    attempt,
    started_at: new Date(startedAt).toISOString(),
    duration_ms: r.durationMs,
    status_code: r.statusCode,
    error: r.error,
    response_body_excerpt: r.excerpt,
  };
  const history = [...d.attempt_history, entry].slice(-ATTEMPTS_KEPT);
  const set: Partial<DeliveryDoc> = { attempts: attempt, last_status_code: r.statusCode, last_error: r.error, attempt_history: history };
  if (r.ok) {
    deps.health.succeeded(d.endpoint_id, new Date(at).toISOString());
    return { set: { ...set, status: 'done', delivered_at: new Date(at).toISOString(), next_attempt_at: null }, retryAt: null };
  }
  deps.health.failed(d.endpoint_id, entry.started_at);
  const active = deps.endpoints.get(d.endpoint_id)?.status === 'active';
  const next = active ? deps.schedule.nextAttemptAt(attempt, at, r.retryAfterSeconds) : null;
  if (next !== null) return { set: { ...set, status: 'pending', next_attempt_at: new Date(next).toISOString() }, retryAt: next };
  if (active && attempt >= MAX_ATTEMPTS) deps.health.exhausted(d.endpoint_id, at);
  return { set: { ...set, status: 'parked', next_attempt_at: null }, retryAt: null };
}
