import { firstValueFrom, take, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConcurrencyError, EventTooLargeError, MAX_APPEND_BYTES, StreamDeletedError, type RecordedEvent } from '../../src/eventstore/eventStore.js';
import { ConnectionStringError, parseConnectionString } from '../../src/eventstore/kurrentDBConnection.js';
import { EventStoreAccessError, KurrentDBEventStore } from '../../src/eventstore/kurrentDBEventStore.js';
import { clientError, FakeKurrent, recorded } from './fakeKurrentClient.js';

/**
 * What the KurrentDB adapter asks of `@kurrent/kurrentdb-client` and of the nodes' HTTP
 * endpoints, checked without a server: a stand-in records every call with its arguments. The
 * real-server behaviour is in the contract suites (eventStore.contract.test.ts,
 * test/webhooks/dispatcherNoSkip.test.ts), run wherever Docker or EVENTSTORE_URL exists.
 */
const URL = 'kurrentdb://localhost:2113?tls=false';
const json = (status: number, body: unknown) => ({ status, body: typeof body === 'string' ? body : JSON.stringify(body) });
const ok = (revision: bigint, position: number) => ({ success: true, nextExpectedRevision: revision, position: { commit: BigInt(position), prepare: BigInt(position) } });
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('KurrentDB adapter: requests to the client (issue 25, no server needed)', () => {
  let fake: FakeKurrent;
  let store: KurrentDBEventStore;
  const open = (version: string | null = '26.0.3', connectionString = URL) => {
    fake = new FakeKurrent();
    if (version) fake.routes.set('GET /info', [json(200, { dbVersion: version, esVersion: version, state: 'leader' })]);
    store = new KurrentDBEventStore({ connectionString, client: fake.client, http: fake.httpCall });
    return fake;
  };
  afterEach(async () => store?.close());

  it('accepts kurrentdb:// and esdb:// alike (contracts §16): the client gets kurrentdb://, the admin calls get the nodes, credentials and TLS settings', () => {
    const a = parseConnectionString('esdb://svc:p%40ss@n1:2113,n2,[::1]:2114?tls=true&tlsCAFile=/certs/ca.crt&nodePreference=leader');
    expect(a.clientConnectionString).toBe('kurrentdb://svc:p%40ss@n1:2113,n2,[::1]:2114?tls=true&tlsCAFile=/certs/ca.crt&nodePreference=leader');
    expect(a.nodes).toEqual([{ host: 'n1', port: 2113 }, { host: 'n2', port: 2113 }, { host: '::1', port: 2114 }]);
    expect(a.credentials).toEqual({ username: 'svc', password: 'p@ss' });
    expect([a.tls, a.tlsVerifyCert, a.tlsCAFile, a.discover]).toEqual([true, true, '/certs/ca.crt', false]);
    const b = parseConnectionString('kurrentdb://localhost:2113?TLS=false&tlsVerifyCert=false');
    expect([b.clientConnectionString, b.tls, b.tlsVerifyCert, b.credentials]).toEqual(['kurrentdb://localhost:2113?TLS=false&tlsVerifyCert=false', false, false, null]);
    const c = parseConnectionString('esdb+discover://cluster.internal:2113');
    expect([c.clientConnectionString, c.discover]).toEqual(['kurrentdb+discover://cluster.internal:2113', true]);
    expect(() => parseConnectionString('mongodb://u:secret@h:27017')).toThrow(ConnectionStringError);
    expect(() => parseConnectionString('mongodb://u:secret@h:27017')).not.toThrow(/secret/);
    expect(() => parseConnectionString('kurrentdb://h:99999')).toThrow(/bad port/);
  });

  it('appends with the client stream states (streamState: any, no_stream, stream_exists, a bigint revision) and JSON events with their ids', async () => {
    open();
    fake.appends.push(ok(0n, 10), ok(1n, 20), ok(2n, 30), ok(3n, 40));
    const r = await store.appendToStream('s-1', [{ type: 'A', data: { n: 1 }, metadata: { by: 't' } }]);
    expect(r).toEqual({ nextExpectedRevision: 0, lastPosition: 10, replayed: false });
    await store.appendToStream('s-1', [{ type: 'A', data: {} }], { expectedRevision: 'no_stream' });
    await store.appendToStream('s-1', [{ type: 'A', data: {} }], { expectedRevision: 'stream_exists' });
    await store.appendToStream('s-1', [{ type: 'A', data: {} }], { expectedRevision: 2 });
    const calls = fake.callsOf('appendToStream');
    expect(calls.map((a) => (a[2] as { streamState: unknown }).streamState)).toEqual(['any', 'no_stream', 'stream_exists', 2n]);
    const [event] = calls[0]![1] as { id: string; type: string; contentType: string; data: unknown; metadata: unknown }[];
    expect(event).toMatchObject({ type: 'A', contentType: 'application/json', data: { n: 1 }, metadata: { by: 't' } });
    expect(event!.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('an append with ids reads where a re-send would sit first (forwards after the expected revision) and answers replayed without writing', async () => {
    open();
    fake.reads.push([recorded(50, 's-2', 'A', {}, 5, uuid(900)), recorded(51, 's-2', 'A', {}, 6, uuid(901))]);
    const r = await store.appendToStream('s-2', [{ type: 'A', data: {}, id: uuid(900).toUpperCase() }, { type: 'A', data: {}, id: uuid(901) }], { expectedRevision: 4 });
    expect(r).toEqual({ nextExpectedRevision: 6, lastPosition: 51, replayed: true });
    expect(fake.callsOf('readStream')).toEqual([['s-2', { direction: 'forwards', fromRevision: 5n, resolveLinkTos: false, maxCount: 2 }]]);
    expect(fake.callsOf('appendToStream')).toEqual([]);
    // Ids not found: the append goes out with them, lower-cased.
    fake.reads.push([]);
    fake.appends.push(ok(0n, 60));
    await store.appendToStream('s-3', [{ type: 'A', data: {}, id: uuid(7) }], { expectedRevision: 'no_stream' });
    expect(fake.callsOf('readStream')[1]).toEqual(['s-3', { direction: 'forwards', fromRevision: 'start', resolveLinkTos: false, maxCount: 1 }]);
    expect((fake.callsOf('appendToStream')[0]![1] as { id: string }[])[0]!.id).toBe(uuid(7));
  });

  it("translates the client's errors: WrongExpectedVersionError.actualState, stream deleted or tombstoned, the server's MaxAppendSize, access denied", async () => {
    open();
    fake.appends.push(
      clientError('wrong-expected-version', { actualState: 3n }),
      clientError('wrong-expected-version', { actualState: 'no_stream' }),
      clientError('stream-deleted'),
      clientError('maximum-append-size-exceeded', { maxAppendSize: 1000 }),
      clientError('access-denied'),
    );
    await expect(store.appendToStream('s', [{ type: 'A', data: {} }], { expectedRevision: 1 })).rejects.toMatchObject({ constructor: ConcurrencyError, actual: 3 });
    await expect(store.appendToStream('s', [{ type: 'A', data: {} }], { expectedRevision: 0 })).rejects.toMatchObject({ constructor: ConcurrencyError, actual: 'no_stream' });
    await expect(store.appendToStream('s', [{ type: 'A', data: {} }])).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(store.appendToStream('s', [{ type: 'A', data: {} }])).rejects.toMatchObject({ constructor: EventTooLargeError, limit: 1000 });
    await expect(store.appendToStream('s', [{ type: 'A', data: {} }])).rejects.toBeInstanceOf(EventStoreAccessError);
  });

  it('refuses an append over the 1 MiB limit before anything reaches the server', async () => {
    open();
    await expect(store.appendToStream('s-1', [{ type: 'big', data: { s: 'x'.repeat(MAX_APPEND_BYTES) } }])).rejects.toBeInstanceOf(EventTooLargeError);
    const halves = [0, 1].map(() => ({ type: 'half', data: { s: 'x'.repeat(MAX_APPEND_BYTES / 2) } }));
    await expect(store.appendToStream('s-1', halves)).rejects.toThrow(/limit of 1048576 bytes per append/);
    expect(fake.calls).toEqual([]);
  });

  it("appendToStreams sends one multiStreamAppend with each stream's expected state and events, and answers each stream's revision and the position of its last event (issue 37)", async () => {
    open();
    fake.multiAppends.push({ position: 99n, responses: [{ streamName: 'a-1', revision: 4n }, { streamName: 'b-1', revision: 0n }] });
    fake.reads.push([recorded(97, 'a-1', 'A', {}, 4)], [recorded(98, 'b-1', 'B', {}, 0)]);
    const results = await store.appendToStreams([
      { streamName: 'a-1', events: [{ type: 'A', data: { n: 1 }, metadata: { by: 't' } }], expectedRevision: 3 },
      { streamName: 'b-1', events: [{ type: 'B', data: { n: 2 } }], expectedRevision: 'no_stream' },
    ]);
    expect(results).toEqual([
      { nextExpectedRevision: 4, lastPosition: 97, replayed: false },
      { nextExpectedRevision: 0, lastPosition: 98, replayed: false },
    ]);
    const [requests] = fake.callsOf('multiStreamAppend')[0] as [{ streamName: string; expectedState: unknown; events: { type: string; data: unknown; metadata: unknown }[] }[]];
    expect(requests.map((r) => [r.streamName, r.expectedState, r.events.map((e) => [e.type, e.data, e.metadata])])).toEqual([
      ['a-1', 3n, [['A', { n: 1 }, { by: 't' }]]],
      ['b-1', 'no_stream', [['B', { n: 2 }, undefined]]],
    ]);
    expect(fake.callsOf('readStream')).toEqual([
      ['a-1', { direction: 'backwards', fromRevision: 4n, resolveLinkTos: false, maxCount: 1 }],
      ['b-1', { direction: 'backwards', fromRevision: 0n, resolveLinkTos: false, maxCount: 1 }],
    ]);
  });

  it('appendToStreams answers a stream whose ids are stored already as replayed and sends only the others; when all replay it sends nothing (issue 37)', async () => {
    open();
    fake.reads.push([recorded(50, 'a-2', 'A', {}, 5, uuid(900))], []);
    fake.multiAppends.push({ position: 60n, responses: [{ streamName: 'b-2', revision: 0n }] });
    fake.reads.push([recorded(60, 'b-2', 'B', {}, 0, uuid(901))]);
    const results = await store.appendToStreams([
      { streamName: 'a-2', events: [{ type: 'A', data: {}, id: uuid(900) }], expectedRevision: 4 },
      { streamName: 'b-2', events: [{ type: 'B', data: {}, id: uuid(901) }], expectedRevision: 'no_stream' },
    ]);
    expect(results).toEqual([
      { nextExpectedRevision: 5, lastPosition: 50, replayed: true },
      { nextExpectedRevision: 0, lastPosition: 60, replayed: false },
    ]);
    const [requests] = fake.callsOf('multiStreamAppend')[0] as [{ streamName: string }[]];
    expect(requests.map((r) => r.streamName)).toEqual(['b-2']);
    fake.reads.push([recorded(50, 'a-2', 'A', {}, 5, uuid(900))]);
    const again = await store.appendToStreams([{ streamName: 'a-2', events: [{ type: 'A', data: {}, id: uuid(900) }], expectedRevision: 4 }]);
    expect(again).toEqual([{ nextExpectedRevision: 5, lastPosition: 50, replayed: true }]);
    expect(fake.callsOf('multiStreamAppend')).toHaveLength(1);
  });

  it("appendToStreams translates the server's refusals for the stream it names: a revision conflict, a tombstone, the transaction's size; and refuses before any request what the client cannot send (issue 37)", async () => {
    open();
    const two = (expected: 'no_stream' | number = 'no_stream') => [
      { streamName: 'a-3', events: [{ type: 'A', data: {} }], expectedRevision: 0 },
      { streamName: 'b-3', events: [{ type: 'B', data: {} }], expectedRevision: expected },
    ];
    fake.multiAppends.push(
      clientError('wrong-expected-version', { streamName: 'b-3', actualState: 2n }),
      clientError('stream-tombstoned', { stream: 'a-3' }),
      clientError('transaction-max-size-exceeded', { size: 2000, maxSize: 1000 }),
      clientError('access-denied'),
    );
    await expect(store.appendToStreams(two())).rejects.toMatchObject({ constructor: ConcurrencyError, streamName: 'b-3', expected: 'no_stream', actual: 2 });
    await expect(store.appendToStreams(two())).rejects.toMatchObject({ constructor: StreamDeletedError, streamName: 'a-3' });
    await expect(store.appendToStreams(two())).rejects.toMatchObject({ constructor: EventTooLargeError, bytes: 2000, limit: 1000 });
    await expect(store.appendToStreams(two())).rejects.toBeInstanceOf(EventStoreAccessError);
    const sent = fake.callsOf('multiStreamAppend').length;
    await expect(store.appendToStreams([{ streamName: 'a-3', events: [{ type: 'A', data: {}, metadata: { n: 1 } }] }])).rejects.toThrow(/string values only/);
    const halves = ['a-4', 'b-4'].map((streamName) => ({ streamName, events: [{ type: 'half', data: { s: 'x'.repeat(MAX_APPEND_BYTES / 2) } }] }));
    await expect(store.appendToStreams(halves)).rejects.toBeInstanceOf(EventTooLargeError);
    await expect(store.appendToStreams([halves[0]!, halves[0]!])).rejects.toThrow(/twice/);
    expect(fake.callsOf('multiStreamAppend')).toHaveLength(sent);
  });

  it('reads a stream with direction, fromRevision and maxCount; a missing stream is empty, a tombstoned one throws StreamDeletedError', async () => {
    open();
    fake.reads.push([recorded(7, 's', 'A', { n: 2 }, 2), recorded(6, 's', 'A', { n: 1 }, 1)], clientError('stream-not-found'), clientError('stream-deleted'));
    const got = await store.readStream('s', { direction: 'backwards', fromRevision: 2, maxCount: 2 });
    expect(got.map((e) => [e.streamRevision, e.globalPosition, e.data.n])).toEqual([
      [2, 7, 2],
      [1, 6, 1],
    ]);
    expect(got[0]!.createdAt).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(await store.readStream('missing')).toEqual([]);
    await expect(store.readStream('gone')).rejects.toBeInstanceOf(StreamDeletedError);
    expect(fake.callsOf('readStream')).toEqual([
      ['s', { direction: 'backwards', fromRevision: 2n, resolveLinkTos: false, maxCount: 2 }],
      ['missing', { direction: 'forwards', fromRevision: 'start', resolveLinkTos: false }],
      ['gone', { direction: 'forwards', fromRevision: 'start', resolveLinkTos: false }],
    ]);
  });

  it('readAll with an event-type filter sends one request filtered by the server and drops the event at the checkpoint itself', async () => {
    open();
    fake.reads.push([recorded(100, 'user-1', 'T', { n: 0 }), recorded(200, 'user-2', 'T', { n: 1 }), recorded(300, 'user-1', 'T', { n: 2 })]);
    const got = await store.readAll({ after: 100, maxCount: 5, filter: { eventTypes: ['T', 'a.b'] } });
    expect(got.map((e) => [e.globalPosition, e.data.n])).toEqual([
      [200, 1],
      [300, 2],
    ]);
    expect(fake.callsOf('readAll')).toEqual([
      [{ fromPosition: { commit: 100n, prepare: 100n }, maxCount: 6, direction: 'forwards', filter: expect.objectContaining({ filterOn: 'eventType', regex: '^(?:T|a\\.b)$' }), resolveLinkTos: false }],
    ]);
  });

  it('readAll asks for the next page from the last position only when a page came back full; prefixes are checked here when types go to the server', async () => {
    open();
    fake.reads.push([recorded(10, 'p-1', 'T', { n: 1 }), recorded(20, 'q-1', 'T', { n: 2 }), recorded(30, 'q-2', 'T', { n: 3 })], [recorded(30, 'q-2', 'T', { n: 3 }), recorded(40, 'p-2', 'T', { n: 4 })]);
    const got = await store.readAll({ maxCount: 2, filter: { eventTypes: ['T'], streamPrefixes: ['p-'] } });
    expect(got.map((e) => e.data.n)).toEqual([1, 4]);
    const calls = fake.callsOf('readAll').map((a) => a[0] as { fromPosition: unknown; maxCount: number });
    expect(calls.map((c) => [c.fromPosition, c.maxCount])).toEqual([
      ['start', 3],
      [{ commit: 30n, prepare: 30n }, 2],
    ]);
  });

  it('an unfiltered readAll still filters on the server, leaving out system events; by prefix it sends the prefixes', async () => {
    open();
    fake.reads.push([recorded(5, 'a', 'X', {}), recorded(6, '$stats-1', '$statsCollected', {})], []);
    expect((await store.readAll()).map((e) => e.streamName)).toEqual(['a']);
    await store.readAll({ filter: { streamPrefixes: ['user-', 'tenant-'] } });
    const filters = fake.callsOf('readAll').map((a) => (a[0] as { filter: object }).filter);
    expect(filters[0]).toMatchObject({ filterOn: 'eventType', regex: '^[^$]' });
    expect(filters[1]).toMatchObject({ filterOn: 'streamName', prefixes: ['user-', 'tenant-'] });
  });

  it('a catch-up read of one event type or one category reads the server secondary index ($idx-et-, $idx-ce-) on KurrentDB 25.1+, asking the version once; reads up to the head and other filters scan (issue 25 item 5)', async () => {
    open('26.0.3');
    for (let i = 0; i < 6; i++) fake.reads.push([]);
    await store.readAll({ filter: { eventTypes: ['user.registered'] }, consistency: 'catch-up' });
    await store.readAll({ filter: { streamPrefixes: ['user-'] }, consistency: 'catch-up' });
    await store.readAll({ filter: { eventTypes: ['user.registered'], streamPrefixes: ['user-'] }, consistency: 'catch-up' });
    await store.readAll({ filter: { eventTypes: ['user.registered'] } });
    await store.readAll({ filter: { eventTypes: ['a', 'b'] }, consistency: 'catch-up' });
    await store.readAll({ filter: { streamPrefixes: ['extref-t1-'] }, consistency: 'catch-up' });
    const filters = fake.callsOf('readAll').map((a) => (a[0] as { filter: { prefixes?: string[]; regex?: string } }).filter);
    expect(filters.map((f) => f.prefixes ?? f.regex)).toEqual([
      ['$idx-et-user.registered'],
      ['$idx-ce-user'],
      ['$idx-et-user.registered'],
      '^(?:user\\.registered)$',
      '^(?:a|b)$',
      ['extref-t1-'],
    ]);
    expect(fake.http.filter((h) => h.path === '/info')).toHaveLength(1);
  });

  it('on a server before 25.1, or one whose indexes are off or closed to the user (an index read refused), catch-up reads scan', async () => {
    open('24.10.0');
    fake.reads.push([]);
    await store.readAll({ filter: { eventTypes: ['T'] }, consistency: 'catch-up' });
    expect((fake.callsOf('readAll')[0]![0] as { filter: { regex: string } }).filter.regex).toBe('^(?:T)$');
    await store.close();
    open('26.0.3');
    fake.reads.push(clientError('access-denied'), [recorded(5, 's', 'T', { n: 1 })], []);
    expect((await store.readAll({ filter: { eventTypes: ['T'] }, consistency: 'catch-up' })).map((e) => e.data.n)).toEqual([1]);
    await store.readAll({ filter: { eventTypes: ['T'] }, consistency: 'catch-up' });
    const filters = fake.callsOf('readAll').map((a) => (a[0] as { filter: { prefixes?: string[]; regex?: string } }).filter);
    expect(filters.map((f) => f.prefixes ?? f.regex)).toEqual([['$idx-et-T'], '^(?:T)$', '^(?:T)$']);
  });

  it('subscribes from the checkpoint with the server-side filter; after a drop it resubscribes from the last position delivered and drops what the server sends again', async () => {
    open();
    const got = firstValueFrom(store.subscribeToAll({ after: 100, filter: { eventTypes: ['T', 'U'] } }).pipe(take(3), toArray()));
    await until(() => fake.subscriptions.length === 1);
    fake.subscriptions[0]!.push_(recorded(100, 's', 'T', { n: 0 }), recorded(150, 's', 'T', { n: 1 }), recorded(160, '$et-T', '$>', {}), recorded(200, 's', 'U', { n: 2 }));
    await until(() => fake.subscriptions[0]!.writableLength === 0);
    fake.subscriptions[0]!.fail(clientError('unavailable'));
    await until(() => fake.subscriptions.length === 2);
    fake.subscriptions[1]!.push_(recorded(200, 's', 'U', { n: 2 }), recorded(300, 's', 'T', { n: 3 }));
    expect((await got).map((e: RecordedEvent) => e.data.n)).toEqual([1, 2, 3]);
    const [first, second] = fake.callsOf('subscribeToAll').map((a) => a[0] as { fromPosition: unknown; filter: { regex: string } });
    expect(first).toMatchObject({ fromPosition: { commit: 100n, prepare: 100n }, filter: { filterOn: 'eventType', regex: '^(?:T|U)$' }, resolveLinkTos: false });
    expect(second!.fromPosition).toEqual({ commit: 200n, prepare: 200n });
    expect(fake.subscriptions[1]!.unsubscribed).toBe(true);
  });

  it('a subscription to one event type reads its index from the start; one the server refuses goes on scanning from where it was', async () => {
    open();
    const got = firstValueFrom(store.subscribeToAll({ filter: { eventTypes: ['T'] } }).pipe(take(2), toArray()));
    await until(() => fake.subscriptions.length === 1);
    fake.subscriptions[0]!.push_(recorded(10, 's', 'T', { n: 1 }));
    await until(() => fake.subscriptions[0]!.writableLength === 0);
    fake.subscriptions[0]!.fail(clientError('unknown'));
    await until(() => fake.subscriptions.length === 2);
    fake.subscriptions[1]!.push_(recorded(20, 's', 'T', { n: 2 }));
    expect((await got).map((e) => e.data.n)).toEqual([1, 2]);
    const [first, second] = fake.callsOf('subscribeToAll').map((a) => a[0] as { fromPosition: unknown; filter: object });
    expect(first).toMatchObject({ fromPosition: 'start', filter: { filterOn: 'streamName', prefixes: ['$idx-et-T'] } });
    expect(second).toMatchObject({ fromPosition: { commit: 10n, prepare: 10n }, filter: { filterOn: 'eventType', regex: '^(?:T)$' } });
  });

  it('headPosition reads $all backwards from the end, one event; a refusal is an error that names the rights (start-up check)', async () => {
    open();
    fake.reads.push([recorded(4242, '$stats', '$statsCollected', {})], clientError('access-denied'));
    expect(await store.headPosition()).toBe(4242);
    expect(fake.callsOf('readAll')[0]).toEqual([{ fromPosition: 'end', maxCount: 1, direction: 'backwards', resolveLinkTos: false }]);
    await expect(store.headPosition()).rejects.toThrow(/\$admins/);
  });

  it('deletes softly with deleteStream and hard with tombstoneStream, at the expected revision; stream_exists pins the last revision read', async () => {
    open();
    fake.deletes.push({}, {}, clientError('stream-not-found'));
    fake.reads.push([recorded(9, 's', 'A', {}, 4)]);
    await store.deleteStream('s', { expectedRevision: 2 });
    await store.deleteStream('s', { expectedRevision: 'stream_exists', hard: true });
    await store.deleteStream('missing');
    expect(fake.callsOf('deleteStream')).toEqual([
      ['s', { expectedRevision: 2n }],
      ['missing', { expectedRevision: 'any' }],
    ]);
    expect(fake.callsOf('tombstoneStream')).toEqual([['s', { expectedRevision: 4n }]]);
    expect(fake.callsOf('readStream')).toEqual([['s', { direction: 'backwards', fromRevision: 'end', resolveLinkTos: false, maxCount: 1 }]]);
  });

  it('purgeDeleted scavenges every live member that gossip lists; waiting, it starts again on a node that was busy and returns once each completed (erasure)', async () => {
    open(null, 'kurrentdb://admin:changeit@n1:2113?tls=false');
    const gossip = {
      members: [
        { state: 'Leader', isAlive: true, httpEndPointIp: '10.0.0.1', httpEndPointPort: 2113, advertiseHostToClientAs: 'kdb1', advertiseHttpPortToClientAs: 2113 },
        { state: 'Follower', isAlive: true, httpEndPointIp: '10.0.0.2', httpEndPointPort: 2113 },
        { state: 'Follower', isAlive: false, httpEndPointIp: '10.0.0.3', httpEndPointPort: 2113 },
        { state: 'Manager', isAlive: true, httpEndPointIp: '10.0.0.4', httpEndPointPort: 2113 },
      ],
    };
    fake.routes.set('GET /gossip', [json(200, gossip)]);
    fake.routes.set('kdb1:2113 POST /admin/scavenge', [json(200, { scavengeId: 's1' })]);
    fake.routes.set('10.0.0.2:2113 POST /admin/scavenge', [json(400, 'Scavenge is already in progress'), json(200, { scavengeId: 's2' })]);
    fake.routes.set('kdb1:2113 GET /admin/scavenge/last', [json(200, { scavengeId: 's1', scavengeResult: 'InProgress' }), json(200, { scavengeId: 's1', scavengeResult: 'Success' })]);
    fake.routes.set('10.0.0.2:2113 GET /admin/scavenge/last', [json(200, { scavengeId: 'old', scavengeResult: 'InProgress' }), json(200, { scavengeId: 's2', scavengeResult: 'Success' })]);
    await store.purgeDeleted({ waitMs: 20_000 });
    const posts = fake.http.filter((h) => h.method === 'POST').map((h) => h.node);
    expect(posts.sort()).toEqual(['10.0.0.2:2113', '10.0.0.2:2113', 'kdb1:2113']);
    expect(fake.http[0]).toEqual({ node: 'n1:2113', method: 'GET', path: '/gossip' });
    expect(fake.http.filter((h) => h.path === '/admin/scavenge/last').length).toBeGreaterThanOrEqual(3);
  });

  it('purgeDeleted without waiting only starts the scavenges; a failed one says which node and why', async () => {
    open(null, 'kurrentdb://n1:2113,n2:2113?tls=false');
    fake.routes.set('n1:2113 POST /admin/scavenge', [json(200, { scavengeId: 's1' })]);
    fake.routes.set('n2:2113 POST /admin/scavenge', [json(401, '')]);
    // No gossip answer: the nodes of the connection string.
    await expect(store.purgeDeleted()).rejects.toThrow(/n2:2113.*401.*\$ops/);
    expect(fake.http.filter((h) => h.method === 'POST').map((h) => h.node).sort()).toEqual(['n1:2113', 'n2:2113']);
    expect(fake.http.some((h) => h.path === '/admin/scavenge/last')).toBe(false);
  });

  it('close disposes the client and completes the live subscriptions', async () => {
    open();
    const done = firstValueFrom(store.subscribeToAll({ filter: { eventTypes: ['A', 'B'] } }).pipe(toArray()));
    await until(() => fake.subscriptions.length === 1);
    await store.close();
    expect(await done).toEqual([]);
    expect(fake.disposed).toBe(true);
    expect(fake.subscriptions[0]!.unsubscribed).toBe(true);
  });
});

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}
