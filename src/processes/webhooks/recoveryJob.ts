import { z } from 'zod';
import { decideReplayDeliveries } from '../../../commands/webhooks/replayDeliveries.js';
import { webhookEndpointState, webhookEndpointStream, type WebhookEndpointEvent, type WebhookEndpointState } from '../../../commands/webhooks/webhookEndpoint.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { ConcurrencyError, StreamDeletedError, type EventStore, type RecordedEvent } from '../../eventstore/eventStore.js';
import type { ReadStore } from '../../readstore/readStore.js';
import type { WorkQueue } from '../../workqueue/workQueue.js';
import { DELIVERIES, type DeliveryDoc } from '../../webhooks/deliveryDocs.js';
import { JobCancelled, type JobHandler } from '../jobs/jobHandler.js';

export const RECOVER_KIND = 'webhook.recover';
/** Replays appended per step: one append, one renewal. */
const CHUNK = 1000;

const RecoverPayload = z.object({
  tenantId: z.string().uuid(),
  endpointId: z.string().uuid(),
  since: z.string(),
  /** Deliveries made after the request (its own replays among them) are not part of it. */
  upTo: z.number().int().nonnegative(),
  at: z.string(),
  by: z.string(),
});
export type RecoverPayload = z.infer<typeof RecoverPayload>;

/** The parked deliveries a recovery takes on: made since `since`, up to the log position of the request, not replayed yet. */
export function recoverableFilter(p: Pick<RecoverPayload, 'endpointId' | 'since' | 'upTo'>, afterId = 0) {
  return { endpoint_id: p.endpointId, status: 'parked', id: { $gt: afterId, $lte: p.upTo }, created_at: { $gte: p.since }, replayed_at: { $exists: false } } as const;
}

/**
 * Enqueues a recovery (POST /v1/webhooks/{id}/recover). One job per endpoint, since and log
 * position; the endpoint's lock runs recoveries of one endpoint one after the other, so a second
 * one sees what the first replayed.
 */
export async function enqueueRecovery(queue: WorkQueue, payload: RecoverPayload): Promise<string> {
  const { job } = await queue.enqueue({
    kind: RECOVER_KIND,
    key: `${payload.endpointId}:${payload.since}:${payload.upTo}`,
    lock: `webhook-endpoint:${payload.endpointId}`,
    payload,
    maxAttempts: 10,
  });
  return job.id;
}

/**
 * Runs a recovery: the endpoint's stream is read once per attempt (not once per chunk, which made
 * a recovery of N deliveries cost N²), then the parked deliveries are replayed in chunks of 1,000
 * read by id from the read store, each chunk one append at the revision the last left. Which
 * deliveries were replayed already comes from the stream itself (its `replay_requested` events),
 * not from the read model, which may lag: an attempt resumed after a crash, or a recovery running
 * right after another, replays nothing twice.
 */
export function recoveryJobHandler(deps: { eventStore: EventStore; readStore: ReadStore }): JobHandler {
  return {
    kind: RECOVER_KIND,
    concurrency: 2,
    async run({ job, signal, renew }) {
      const p = RecoverPayload.parse(job.payload);
      const stream = webhookEndpointStream(p.endpointId);
      let { state, revision, replayed } = await fold(deps.eventStore, stream, webhookEndpointState.initialState(), -1, new Set());
      let after = typeof (job.progress as { after?: unknown } | null)?.after === 'number' ? (job.progress as { after: number }).after : 0;
      for (;;) {
        if (signal.aborted) return;
        const page = await deps.readStore.find<DeliveryDoc>(DELIVERIES, { filter: recoverableFilter(p, after), sort: [['id', 1]], limit: CHUNK, fields: ['id'] });
        if (page.length === 0) return;
        const ids = page.map((d) => d.id).filter((id) => !replayed.has(id));
        const last = page[page.length - 1]!.id;
        if (ids.length > 0) {
          for (let tries = 0; ; tries++) {
            let events: WebhookEndpointEvent[];
            try {
              events = decideReplayDeliveries({ ...p, deliveryIds: ids }, state);
            } catch (err) {
              // Disabled or deleted since the request: nothing more to replay (spec: replays need an enabled endpoint).
              if (err instanceof DomainError) throw new JobCancelled(err.message);
              throw err;
            }
            // Renewed just before the append: a holder that lost the job appends nothing.
            await renew({ after });
            try {
              await deps.eventStore.appendToStream(stream, events, { expectedRevision: revision < 0 ? 'no_stream' : revision });
              for (const id of ids) replayed.add(id);
              revision += events.length;
              break;
            } catch (err) {
              if (!(err instanceof ConcurrencyError) || tries >= 5) throw err;
              // Someone else wrote to the endpoint (a PATCH, a replay): only the new tail is read.
              ({ state, revision, replayed } = await fold(deps.eventStore, stream, state, revision, replayed));
            }
          }
        }
        after = last;
        await renew({ after });
      }
    },
  };
}

/** Folds the stream from after `revision` on, collecting the deliveries it asked to replay. */
async function fold(eventStore: EventStore, stream: string, state: WebhookEndpointState, revision: number, replayed: Set<number>) {
  let events: RecordedEvent<WebhookEndpointEvent>[];
  try {
    events = (await eventStore.readStream(stream, { fromRevision: revision + 1 })) as RecordedEvent<WebhookEndpointEvent>[];
  } catch (err) {
    if (err instanceof StreamDeletedError) throw new JobCancelled('the webhook endpoint was erased');
    throw err;
  }
  for (const e of events) {
    state = webhookEndpointState.evolve(state, e);
    if (e.type === 'webhook_endpoint.replay_requested') replayed.add((e.data as { delivery_id: number }).delivery_id);
    revision = e.streamRevision;
  }
  return { state, revision, replayed };
}
