import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { eventTypeFilter, streamNameFilter } from '@eventstore/db-client';
import { Metadata } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { EventTooLargeError, MAX_APPEND_BYTES } from '../../src/eventstore/eventStore.js';
import { buildFilteredReadAllRequest, MAX_SEARCH_WINDOW } from '../../src/eventstore/esdbFilteredRead.js';
import { EventStoreAccessError, EventStoreDBEventStore } from '../../src/eventstore/eventStoreDBEventStore.js';

/**
 * What the EventStoreDB adapter asks of the server, checked without one: the requests are built
 * with the client's own protobuf classes and answered by a stand-in for its gRPC stream. The
 * real-server behaviour is in the contract suite (eventStore.contract.test.ts), run wherever
 * Docker or EVENTSTORE_URL exists.
 */
const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const pb = require('@eventstore/db-client/generated/streams_pb.js') as any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const shared = require('@eventstore/db-client/generated/shared_pb.js') as any;

type Sent = { options: Record<string, unknown> };

function recorded(position: number, stream: string, type: string, n: number): unknown {
  const e = new pb.ReadResp.ReadEvent.RecordedEvent();
  const id = new shared.UUID();
  id.setString(`00000000-0000-4000-8000-${String(position).padStart(12, '0')}`);
  e.setId(id);
  const sid = new shared.StreamIdentifier();
  sid.setStreamName(Buffer.from(stream));
  e.setStreamIdentifier(sid);
  e.setStreamRevision('0');
  e.setCommitPosition(String(position));
  e.setPreparePosition(String(position));
  e.getMetadataMap().set('type', type).set('content-type', 'application/json').set('created', '638000000000000000');
  e.setData(Buffer.from(JSON.stringify({ n })));
  const read = new pb.ReadResp.ReadEvent();
  read.setEvent(e);
  read.setCommitPosition(String(position));
  const resp = new pb.ReadResp();
  resp.setEvent(read);
  return resp;
}

/** Answers each read with the next page (or an error) and records the requests. */
function fakeServer(store: EventStoreDBEventStore, pages: (unknown[] | Error)[]) {
  const sent: Sent[] = [];
  const client = (store as unknown as { client: Record<string, unknown> }).client;
  client.GRPCStreamCreator = (_c: unknown, _name: string, creator: (g: unknown) => unknown) => async () =>
    creator({
      read: (req: { getOptions(): { toObject(): Record<string, unknown> } }) => {
        sent.push({ options: req.getOptions().toObject() });
        const page = pages.shift() ?? [];
        if (page instanceof Error) {
          const s = new Readable({ objectMode: true, read() {} });
          setImmediate(() => s.destroy(page));
          return s;
        }
        return Readable.from(page);
      },
    });
  client.appendToStream = () => {
    throw new Error('the append reached the server');
  };
  return sent;
}

describe('EventStoreDB adapter: requests (no server needed)', () => {
  let store: EventStoreDBEventStore;
  afterEach(async () => store?.close());

  it('builds a forwards $all read whose filter is set for the server, not "no filter"', () => {
    const req = buildFilteredReadAllRequest({
      fromPosition: { commit: 120n, prepare: 120n },
      maxCount: 3,
      filter: eventTypeFilter({ regex: '^(?:a|b)$', checkpointInterval: 1 }),
    });
    const o = req.getOptions() as { toObject(): Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
    const obj = o.toObject();
    expect(obj.all.position).toEqual({ commitPosition: '120', preparePosition: '120' });
    expect(obj.count).toBe('3');
    expect(obj.readDirection).toBe(0);
    expect(obj.noFilter).toBeUndefined();
    expect(obj.filter.eventType.regex).toBe('^(?:a|b)$');
    expect(obj.filter.max).toBe(MAX_SEARCH_WINDOW);
    expect(obj.filter.checkpointintervalmultiplier).toBe(1);
    const byStream = buildFilteredReadAllRequest({ fromPosition: 'start', maxCount: 1, filter: streamNameFilter({ prefixes: ['user-'] }) });
    const s = (byStream.getOptions() as { toObject(): Record<string, any> }).toObject(); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(s.filter.streamIdentifier.prefixList).toEqual(['user-']);
    expect(s.all.start).toBeDefined();
  });

  it('readAll with an event-type filter sends one filtered request and drops the event at the checkpoint itself', async () => {
    store = new EventStoreDBEventStore({ connectionString: 'esdb://localhost:2113?tls=false' });
    const sent = fakeServer(store, [[recorded(100, 'user-1', 'T', 0), recorded(200, 'user-2', 'T', 1), recorded(300, 'user-1', 'T', 2)]]);
    const got = await store.readAll({ after: 100, maxCount: 5, filter: { eventTypes: ['T'] } });
    expect(got.map((e) => [e.globalPosition, e.data.n])).toEqual([
      [200, 1],
      [300, 2],
    ]);
    expect(sent).toHaveLength(1);
    const o = sent[0]!.options as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(o.filter.eventType.regex).toBe('^(?:T)$');
    expect(o.all.position).toEqual({ commitPosition: '100', preparePosition: '100' });
    expect(o.count).toBe('6');
  });

  it('readAll asks for the next page from the last position only when a page came back full', async () => {
    store = new EventStoreDBEventStore({ connectionString: 'esdb://localhost:2113?tls=false' });
    const sent = fakeServer(store, [
      [recorded(10, 'p-1', 'T', 1), recorded(20, 'q-1', 'T', 2), recorded(30, 'q-2', 'T', 3)],
      [recorded(30, 'q-2', 'T', 3), recorded(40, 'p-2', 'T', 4)],
    ]);
    // Types go to the server; the prefix is checked here, so the first page yields one match of two wanted.
    const got = await store.readAll({ maxCount: 2, filter: { eventTypes: ['T'], streamPrefixes: ['p-'] } });
    expect(got.map((e) => e.data.n)).toEqual([1, 4]);
    expect(sent.map((s) => (s.options as { count: string }).count)).toEqual(['3', '2']);
    expect((sent[1]!.options as { all: { position: unknown } }).all.position).toEqual({ commitPosition: '30', preparePosition: '30' });
  });

  it('an unfiltered readAll still filters on the server, leaving out system events', async () => {
    store = new EventStoreDBEventStore({ connectionString: 'esdb://localhost:2113?tls=false' });
    const sent = fakeServer(store, [[recorded(5, 'a', 'X', 1)]]);
    await store.readAll();
    expect((sent[0]!.options as { filter: { eventType: { regex: string } } }).filter.eventType.regex).toBe('^[^$]');
  });

  it('refuses an append over the 1 MiB limit before anything reaches the server', async () => {
    store = new EventStoreDBEventStore({ connectionString: 'esdb://localhost:2113?tls=false' });
    fakeServer(store, []);
    const big = { type: 'big', data: { s: 'x'.repeat(MAX_APPEND_BYTES) } };
    await expect(store.appendToStream('s-1', [big])).rejects.toBeInstanceOf(EventTooLargeError);
    const halves = [0, 1].map(() => ({ type: 'half', data: { s: 'x'.repeat(MAX_APPEND_BYTES / 2) } }));
    await expect(store.appendToStream('s-1', halves)).rejects.toThrow(/limit of 1048576 bytes per append/);
  });

  it('a read of $all refused for want of rights is an error that names the rights (start-up check)', async () => {
    store = new EventStoreDBEventStore({ connectionString: 'esdb://localhost:2113?tls=false' });
    const denied = Object.assign(new Error('16 UNAUTHENTICATED: Access denied'), { code: 16, details: 'Access denied', metadata: new Metadata() });
    fakeServer(store, [denied, denied]);
    await expect(store.headPosition()).rejects.toBeInstanceOf(EventStoreAccessError);
    await expect(store.readAll({ filter: { eventTypes: ['T'] } })).rejects.toThrow(/\$admins/);
  });
});
