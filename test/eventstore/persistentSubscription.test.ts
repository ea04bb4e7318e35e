import { randomUUID } from 'node:crypto';
import { first as firstWhere, firstValueFrom, retry, take, timeout, toArray } from 'rxjs';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { AckableEvent, EventStore } from '../../src/eventstore/eventStore.js';
import { EventStoreDBEventStore } from '../../src/eventstore/eventStoreDBEventStore.js';

/**
 * The optional persistent subscription of the event store port (the webhook dispatcher's
 * transport on EventStoreDB): filtered on the server, resumed by the server for the group, and
 * what was not acknowledged comes again.
 */
const url = inject('eventstoreUrl');
const suite = url ? describe : describe.skip;

suite('EventStoreDB persistent subscription to $all (subscribePersistent)', () => {
  const stores: EventStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });
  const open = () => {
    const s = new EventStoreDBEventStore({ connectionString: url });
    stores.push(s);
    return s;
  };

  it('delivers only the filtered types after the start position, and again what was not acknowledged', async () => {
    const store = open();
    const type = `P${randomUUID().replace(/-/g, '')}`;
    const stream = `persist-${randomUUID()}`;
    const after = await store.headPosition();
    await store.appendToStream(stream, [
      { type, data: { n: 1 } },
      { type: 'Other', data: { n: 0 } },
      { type, data: { n: 2 } },
      { type, data: { n: 3 } },
    ]);
    const group = `g-${randomUUID()}`;
    const first: AckableEvent[] = await firstValueFrom(store.subscribePersistent!(group, { filter: { eventTypes: [type] }, after }).pipe(take(3), toArray()));
    expect(first.map((m) => m.event.data.n)).toEqual([1, 2, 3]);
    await first[0]!.ack();
    await first[1]!.ack();
    // The server resumes from its checkpoint: the unacknowledged third event comes again (the
    // acknowledged ones may too, before the checkpoint is written; consumers skip what they have).
    // One consumer at a time: the first one's leaving may take the server a moment to see.
    const again = open();
    const third = await firstValueFrom(
      again.subscribePersistent!(group, { filter: { eventTypes: [type] }, after }).pipe(
        retry({ count: 20, delay: 250 }),
        firstWhere((m) => m.event.data.n === 3),
        timeout(20_000),
      ),
    );
    expect(third.event.type).toBe(type);
  });
});
