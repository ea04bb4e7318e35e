import { z } from 'zod';
import { parkedSince } from '../../queries/webhooks/webhookDeliveries.js';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { replayDeliveries } from './replayDeliveries.js';

export const RecoverDeliveriesInput = z.object({
  tenantId: z.string().uuid(),
  endpointId: z.string().uuid(),
  since: z.string().datetime({ offset: true }),
  at: z.string().datetime(),
  by: z.string().min(1),
});
export type RecoverDeliveries = z.infer<typeof RecoverDeliveriesInput>;

const CHUNK = 1000;

/**
 * Recovery after an outage: every parked delivery of the endpoint created since `since` is
 * replayed once (spec "Events" 4), in chunks; each chunk waits until its replays exist, which
 * also marks their originals replayed, so the next chunk starts where this one ended and a
 * recovery repeated after a crash does not replay anything twice. Answers how many were replayed.
 */
export async function recoverDeliveries(
  deps: { eventStore: EventStore; readStore: ReadStore; settle: (position: number) => Promise<void> },
  input: RecoverDeliveries,
): Promise<number> {
  const cmd = RecoverDeliveriesInput.parse(input);
  const since = new Date(cmd.since).toISOString();
  // Deliveries made after the recovery began (its own replays among them) are not part of it.
  const upTo = await deps.eventStore.headPosition();
  let replayed = 0;
  for (;;) {
    const parked = await parkedSince(deps.readStore, cmd.endpointId, since, upTo, CHUNK);
    if (parked.length === 0) return replayed;
    const result = await replayDeliveries(deps.eventStore, { ...cmd, deliveryIds: parked.map((d) => d.id) });
    await deps.settle(result.position);
    replayed += parked.length;
  }
}
