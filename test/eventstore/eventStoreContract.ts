import { randomUUID } from 'node:crypto';
import { firstValueFrom, take, takeWhile, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConcurrencyError, EventTooLargeError, IdempotencyConflictError, MAX_APPEND_BYTES, MAX_STREAMS_PER_APPEND, StreamDeletedError, type EventStore, type RecordedEvent } from '../../src/eventstore/eventStore.js';

const ev = (type: string, n = 0, id?: string) => ({ type, data: { n }, metadata: { by: 'test' }, ...(id ? { id } : {}) });

/**
 * The event store port's contract. Every adapter runs it; stream names are unique per test so
 * the suite can share one server.
 */
export function eventStoreContract(name: string, make: () => Promise<EventStore>) {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    let s: string;
    beforeEach(async () => {
      store = await make();
      s = `t${randomUUID().replace(/-/g, '')}`;
    });
    afterEach(async () => store.close());

    it('appends to a new stream with expected no_stream and numbers revisions from 0', async () => {
      const r = await store.appendToStream(`${s}-a`, [ev('A', 1), ev('A', 2)], { expectedRevision: 'no_stream' });
      expect(r.nextExpectedRevision).toBe(1);
      const read = await store.readStream(`${s}-a`);
      expect(read.map((e) => [e.streamRevision, e.data.n, e.metadata])).toEqual([
        [0, 1, { by: 'test' }],
        [1, 2, { by: 'test' }],
      ]);
    });

    it('rejects a wrong expected revision with a typed ConcurrencyError and writes nothing', async () => {
      await store.appendToStream(`${s}-a`, [ev('A')], { expectedRevision: 'no_stream' });
      await expect(store.appendToStream(`${s}-a`, [ev('A')], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(store.appendToStream(`${s}-a`, [ev('A')], { expectedRevision: 5 })).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(store.appendToStream(`${s}-missing`, [ev('A')], { expectedRevision: 'stream_exists' })).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(store.appendToStream(`${s}-missing`, [ev('A')], { expectedRevision: 0 })).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await store.readStream(`${s}-a`)).toHaveLength(1);
      expect(await store.readStream(`${s}-missing`)).toHaveLength(0);
      const ok = await store.appendToStream(`${s}-a`, [ev('A')], { expectedRevision: 0 });
      expect(ok.nextExpectedRevision).toBe(1);
    });

    it('lets exactly one of two racing writers with the same expected revision win', async () => {
      await store.appendToStream(`${s}-race`, [ev('A')]);
      const results = await Promise.allSettled([
        store.appendToStream(`${s}-race`, [ev('B', 1)], { expectedRevision: 0 }),
        store.appendToStream(`${s}-race`, [ev('B', 2)], { expectedRevision: 0 }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(rejected.reason).toBeInstanceOf(ConcurrencyError);
      expect(await store.readStream(`${s}-race`)).toHaveLength(2);
    });

    it('is idempotent by event id: re-sending the same append after a lost answer stores nothing twice', async () => {
      const ids: string[] = [randomUUID(), randomUUID()];
      const first = await store.appendToStream(`${s}-i`, [ev('A', 1, ids[0]), ev('A', 2, ids[1])], { expectedRevision: 'no_stream' });
      const again = await store.appendToStream(`${s}-i`, [ev('A', 1, ids[0]), ev('A', 2, ids[1])], { expectedRevision: 'no_stream' });
      expect(again.nextExpectedRevision).toBe(first.nextExpectedRevision);
      expect(await store.readStream(`${s}-i`)).toHaveLength(2);
      const all = await readAllOf(store, s);
      expect(all.filter((e) => ids.includes(e.id))).toHaveLength(2);
    });

    it('refuses an append that reuses a stored event id at another position of the stream', async () => {
      const id = randomUUID();
      await store.appendToStream(`${s}-x`, [ev('A', 1, id)]);
      await expect(store.appendToStream(`${s}-x`, [ev('A', 2), ev('A', 1, id)])).rejects.toBeInstanceOf(Error);
      expect(await store.readStream(`${s}-x`)).toHaveLength(1);
    });

    it('reads a stream forwards and backwards from a revision with a max count', async () => {
      await store.appendToStream(`${s}-r`, [0, 1, 2, 3, 4].map((n) => ev('A', n)));
      const fwd = await store.readStream(`${s}-r`, { fromRevision: 1, maxCount: 2 });
      expect(fwd.map((e) => e.data.n)).toEqual([1, 2]);
      const bwd = await store.readStream(`${s}-r`, { direction: 'backwards', maxCount: 2 });
      expect(bwd.map((e) => e.data.n)).toEqual([4, 3]);
      const bwdFrom = await store.readStream(`${s}-r`, { direction: 'backwards', fromRevision: 2 });
      expect(bwdFrom.map((e) => e.data.n)).toEqual([2, 1, 0]);
      expect(await store.readStream(`${s}-none`)).toEqual([]);
    });

    it('orders events across streams by global position in append order', async () => {
      await store.appendToStream(`${s}-1`, [ev(`${s}T`, 1)]);
      await store.appendToStream(`${s}-2`, [ev(`${s}T`, 2)]);
      await store.appendToStream(`${s}-1`, [ev(`${s}T`, 3), ev(`${s}T`, 4)]);
      const all = await readAllOf(store, s);
      expect(all.map((e) => e.data.n)).toEqual([1, 2, 3, 4]);
      const positions = all.map((e) => e.globalPosition);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      expect(new Set(positions).size).toBe(4);
      expect(await store.headPosition()).toBeGreaterThanOrEqual(positions[3]!);
    });

    it('filters readAll by stream prefix and by event type', async () => {
      await store.appendToStream(`${s}-p-1`, [ev(`${s}A`, 1)]);
      await store.appendToStream(`${s}-q-1`, [ev(`${s}B`, 2)]);
      await store.appendToStream(`${s}-p-2`, [ev(`${s}B`, 3)]);
      const byPrefix = await store.readAll({ filter: { streamPrefixes: [`${s}-p-`] }, maxCount: 100 });
      expect(byPrefix.map((e) => e.data.n)).toEqual([1, 3]);
      const byType = await store.readAll({ filter: { eventTypes: [`${s}B`] }, maxCount: 100 });
      expect(byType.map((e) => e.data.n)).toEqual([2, 3]);
      const after = await store.readAll({ after: byType[0]!.globalPosition, filter: { eventTypes: [`${s}B`] } });
      expect(after.map((e) => e.data.n)).toEqual([3]);
    });

    it('subscription catches up from a checkpoint and hands over to live events without gaps or reordering', async () => {
      const type = `${s}S`;
      for (let i = 0; i < 30; i++) await store.appendToStream(`${s}-s${i % 3}`, [ev(type, i)]);
      const history = await store.readAll({ filter: { eventTypes: [type] }, maxCount: 100 });
      const checkpoint = history[9]!.globalPosition;
      const got = firstValueFrom(store.subscribeToAll({ after: checkpoint, filter: { eventTypes: [type] } }).pipe(take(40), toArray()));
      // Live appends race with the catch-up read on purpose.
      for (let i = 30; i < 50; i++) await store.appendToStream(`${s}-s${i % 3}`, [ev(type, i)]);
      const events = await got;
      expect(events.map((e) => e.data.n)).toEqual(Array.from({ length: 40 }, (_, i) => i + 10));
    });

    it('subscription filtered by stream prefix delivers only that prefix, live too', async () => {
      const got = firstValueFrom(store.subscribeToAll({ filter: { streamPrefixes: [`${s}-keep-`] } }).pipe(take(3), toArray()));
      await store.appendToStream(`${s}-drop-1`, [ev('X', 0)]);
      await store.appendToStream(`${s}-keep-1`, [ev('X', 1)]);
      await store.appendToStream(`${s}-drop-2`, [ev('X', 2)]);
      await store.appendToStream(`${s}-keep-2`, [ev('X', 3), ev('X', 4)]);
      expect((await got).map((e) => e.data.n)).toEqual([1, 3, 4]);
    });

    it('a resumed subscription starts strictly after the saved checkpoint', async () => {
      const type = `${s}R`;
      await store.appendToStream(`${s}-c`, [0, 1, 2, 3].map((n) => ev(type, n)));
      const first = await firstValueFrom(store.subscribeToAll({ filter: { eventTypes: [type] } }).pipe(take(2), toArray()));
      const checkpoint = first[1]!.globalPosition;
      const rest = await firstValueFrom(store.subscribeToAll({ after: checkpoint, filter: { eventTypes: [type] } }).pipe(take(2), toArray()));
      expect(rest.map((e) => e.data.n)).toEqual([2, 3]);
    });

    it('soft-deletes a stream: reads are empty and the stream can be written again', async () => {
      await store.appendToStream(`${s}-d`, [ev('A', 1), ev('A', 2)]);
      await store.deleteStream(`${s}-d`);
      expect(await store.readStream(`${s}-d`)).toEqual([]);
      await store.appendToStream(`${s}-d`, [ev('A', 3)], { expectedRevision: 'no_stream' });
      expect((await store.readStream(`${s}-d`)).map((e) => e.data.n)).toEqual([3]);
    });

    it('hard-deletes (tombstones) a stream: it can never be read or written again', async () => {
      await store.appendToStream(`${s}-h`, [ev('A', 1)]);
      await expect(store.deleteStream(`${s}-h`, { expectedRevision: 5, hard: true })).rejects.toBeInstanceOf(ConcurrencyError);
      await store.deleteStream(`${s}-h`, { expectedRevision: 0, hard: true });
      await expect(store.readStream(`${s}-h`)).rejects.toBeInstanceOf(StreamDeletedError);
      await expect(store.appendToStream(`${s}-h`, [ev('A', 2)])).rejects.toBeInstanceOf(StreamDeletedError);
    });

    it('a job re-run after a crash appends the same content-digest ids at the same explicit revisions: each append answers replayed and nothing is doubled (idempotency per stream, as the ETL writes)', async () => {
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      const job = async (upTo: number) => {
        let expected: number | 'no_stream' = 'no_stream';
        const results = [];
        for (let n = 0; n < upTo; n++) {
          const r = await store.appendToStream(`${s}-job`, [ev('records.ingested', n, ids[n])], { expectedRevision: expected });
          results.push(r);
          expected = r.nextExpectedRevision;
        }
        return results;
      };
      const first = await job(2);
      const rerun = await job(3);
      expect(rerun.map((r) => r.replayed)).toEqual([true, true, false]);
      expect(rerun.slice(0, 2).map((r) => r.lastPosition)).toEqual(first.map((r) => r.lastPosition));
      expect((await store.readStream(`${s}-job`)).map((e) => [e.id.toLowerCase(), e.data.n])).toEqual(ids.map((id, n) => [id, n]));
    });

    it('stores an event just under the append limit whole (a record batch with sealing overhead) and reads it back by stream, by $all and by subscription', async () => {
      const type = `${s}Big`;
      const payload = 'r'.repeat(900 * 1024);
      await store.appendToStream(`${s}-big`, [{ type, data: { payload, n: 1 }, metadata: { by: 'test' } }]);
      const [byStream] = await store.readStream(`${s}-big`);
      expect(byStream!.data.payload).toBe(payload);
      const [byAll] = await store.readAll({ filter: { eventTypes: [type] } });
      expect((byAll!.data.payload as string).length).toBe(payload.length);
      const [live] = await firstValueFrom(store.subscribeToAll({ filter: { eventTypes: [type] } }).pipe(take(1), toArray()));
      expect((live!.data.payload as string).length).toBe(payload.length);
    });

    it('refuses an append over the 1 MiB limit with EventTooLargeError and writes nothing, one big event or several', async () => {
      await expect(store.appendToStream(`${s}-huge`, [{ type: 'A', data: { s: 'x'.repeat(MAX_APPEND_BYTES) } }])).rejects.toBeInstanceOf(EventTooLargeError);
      const halves = [1, 2, 3].map((n) => ({ type: 'A', data: { n, s: 'x'.repeat(400 * 1024) } }));
      await expect(store.appendToStream(`${s}-huge`, halves, { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(EventTooLargeError);
      expect(await store.readStream(`${s}-huge`)).toEqual([]);
      const ok = await store.appendToStream(`${s}-huge`, halves.slice(0, 2), { expectedRevision: 'no_stream' });
      expect(ok.nextExpectedRevision).toBe(1);
    });

    it('catch-up reads and subscriptions filtered by one event type or one category (KurrentDB: its secondary indexes) give the events a scan gives, in log order, never skipping one (issue 25)', async () => {
      const type = `${s}Idx`;
      const category = `c${s}`;
      await store.appendToStream(`${category}-1`, [ev(type, 1), ev('Other', 2)]);
      await store.appendToStream(`${s}-elsewhere`, [ev(type, 3)]);
      await store.appendToStream(`${category}-2`, [ev('Other', 4), ev(type, 5)]);
      const byType = await store.readAll({ filter: { eventTypes: [type] }, maxCount: 100 });
      const byCategory = await store.readAll({ filter: { streamPrefixes: [`${category}-`] }, maxCount: 100 });
      expect(byType.map((e) => e.data.n)).toEqual([1, 3, 5]);
      expect(byCategory.map((e) => e.data.n)).toEqual([1, 2, 4, 5]);
      // An index trails the log by moments: a catch-up read may stop short, but never skips.
      for (const [filter, scan] of [[{ eventTypes: [type] }, byType], [{ streamPrefixes: [`${category}-`] }, byCategory]] as const) {
        let got: RecordedEvent[] = [];
        for (let i = 0; i < 100 && got.length < scan.length; i++) {
          got = await store.readAll({ filter, maxCount: 100, consistency: 'catch-up' });
          expect(got.map((e) => e.id)).toEqual(scan.slice(0, got.length).map((e) => e.id));
          if (got.length < scan.length) await new Promise((r) => setTimeout(r, 50));
        }
        expect(got.map((e) => [e.globalPosition, e.streamName, e.data.n])).toEqual(scan.map((e) => [e.globalPosition, e.streamName, e.data.n]));
        const paged = await store.readAll({ after: scan[0]!.globalPosition, filter, maxCount: 1, consistency: 'catch-up' });
        expect(paged.map((e) => e.id)).toEqual([scan[1]!.id]);
        const live = await firstValueFrom(store.subscribeToAll({ after: scan[0]!.globalPosition, filter }).pipe(take(scan.length - 1), toArray()));
        expect(live.map((e) => e.id)).toEqual(scan.slice(1).map((e) => e.id));
      }
    });

    it("erasure: after a tombstone and a completed purge no read path returns the stream's events: the stream, $all, filtered by type or category, catch-up reads (indexes), subscriptions (issue 25)", async () => {
      const gone = `${s}Gone`;
      const category = `e${s}`;
      const before = await store.headPosition();
      await store.appendToStream(`${category}-gone`, [ev(gone, 1), ev(gone, 2)]);
      await store.appendToStream(`${category}-kept`, [ev(`${s}Kept`, 3)]);
      const erased = (await store.readStream(`${category}-gone`)).map((e) => e.id);
      await store.deleteStream(`${category}-gone`, { hard: true });
      await store.purgeDeleted?.({ waitMs: 120_000 });
      const isErased = (e: RecordedEvent) => e.streamName === `${category}-gone` || erased.includes(e.id);
      await expect(store.readStream(`${category}-gone`)).rejects.toBeInstanceOf(StreamDeletedError);
      expect((await store.readAll({ after: before, maxCount: 10_000 })).filter(isErased)).toEqual([]);
      for (const consistency of ['head', 'catch-up'] as const) {
        expect(await store.readAll({ filter: { eventTypes: [gone] }, consistency })).toEqual([]);
        expect((await store.readAll({ filter: { streamPrefixes: [`${category}-`] }, consistency })).map((e) => e.data.n)).toEqual([3]);
        expect((await store.readAll({ filter: { streamPrefixes: [`${category}-gone`] }, consistency }))).toEqual([]);
      }
      const byCategory = await firstValueFrom(store.subscribeToAll({ after: before, filter: { streamPrefixes: [`${category}-`] } }).pipe(take(1), toArray()));
      expect(byCategory.map((e) => e.data.n)).toEqual([3]);
      const everything = await firstValueFrom(
        store.subscribeToAll({ after: before }).pipe(
          takeWhile((e) => e.streamName !== `${category}-kept`, true),
          toArray(),
        ),
      );
      expect(everything.filter(isErased)).toEqual([]);
    }, 150_000);

    describe('appendToStreams: one atomic append to several streams (issue 37: an upload accepted in one durable write)', () => {
      it('writes every stream, each at its expected revision, with global positions in the order of the requests', async () => {
        await store.appendToStream(`${s}-m1`, [ev('A', 0)]);
        const results = await store.appendToStreams([
          { streamName: `${s}-m1`, events: [ev(`${s}M`, 1), ev(`${s}M`, 2)], expectedRevision: 0 },
          { streamName: `${s}-m2`, events: [ev(`${s}M`, 3)], expectedRevision: 'no_stream' },
        ]);
        expect(results.map((r) => [r.nextExpectedRevision, r.replayed])).toEqual([[2, false], [0, false]]);
        expect((await store.readStream(`${s}-m1`)).map((e) => e.data.n)).toEqual([0, 1, 2]);
        const written = (await readAllOf(store, `${s}-m`)).filter((e) => e.type === `${s}M`);
        expect(written.map((e) => e.data.n)).toEqual([1, 2, 3]);
        expect(results.map((r) => r.lastPosition)).toEqual([written[1]!.globalPosition, written[2]!.globalPosition]);
        expect(written[0]!.globalPosition).toBeLessThan(written[1]!.globalPosition);
        expect(written[1]!.globalPosition).toBeLessThan(written[2]!.globalPosition);
      });

      it('is all or nothing: a wrong expected revision on the second stream leaves the first unwritten, and the ConcurrencyError names the second', async () => {
        await store.appendToStream(`${s}-n2`, [ev('A', 0)]);
        const err = await store
          .appendToStreams([
            { streamName: `${s}-n1`, events: [ev('A', 1)], expectedRevision: 'no_stream' },
            { streamName: `${s}-n2`, events: [ev('A', 2)], expectedRevision: 'no_stream' },
          ])
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ConcurrencyError);
        expect((err as ConcurrencyError).streamName).toBe(`${s}-n2`);
        expect(await store.readStream(`${s}-n1`)).toEqual([]);
        expect(await store.readStream(`${s}-n2`)).toHaveLength(1);
      });

      it('lets exactly one of two racing multi-stream appends at the same expected revisions win', async () => {
        const race = (n: number) =>
          store.appendToStreams([
            { streamName: `${s}-r1`, events: [ev('A', n)], expectedRevision: 'no_stream' },
            { streamName: `${s}-r2`, events: [ev('A', n)], expectedRevision: 'no_stream' },
          ]);
        const results = await Promise.allSettled([race(1), race(2)]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
        const first = (await store.readStream(`${s}-r1`)).map((e) => e.data.n);
        expect(first).toHaveLength(1);
        expect((await store.readStream(`${s}-r2`)).map((e) => e.data.n)).toEqual(first);
      });

      it('replays per stream by event id: a re-sent call writes nothing twice and answers each stream replayed with its original result', async () => {
        const ids = [randomUUID(), randomUUID()];
        const call = () =>
          store.appendToStreams([
            { streamName: `${s}-p1`, events: [ev('A', 1, ids[0])], expectedRevision: 'no_stream' },
            { streamName: `${s}-p2`, events: [ev('A', 2, ids[1])], expectedRevision: 'no_stream' },
          ]);
        const first = await call();
        const again = await call();
        expect(again).toEqual(first.map((r) => ({ ...r, replayed: true })));
        expect(await store.readStream(`${s}-p1`)).toHaveLength(1);
        expect(await store.readStream(`${s}-p2`)).toHaveLength(1);
        // A stream stored before answers replayed while the other is written.
        const id3 = randomUUID();
        const mixed = await store.appendToStreams([
          { streamName: `${s}-p1`, events: [ev('A', 1, ids[0])], expectedRevision: 'no_stream' },
          { streamName: `${s}-p3`, events: [ev('A', 3, id3)], expectedRevision: 'no_stream' },
        ]);
        expect(mixed.map((r) => r.replayed)).toEqual([true, false]);
        expect((await store.readStream(`${s}-p3`)).map((e) => e.data.n)).toEqual([3]);
      });

      it('refuses a tombstoned stream with StreamDeletedError and writes none of the others', async () => {
        await store.appendToStream(`${s}-t2`, [ev('A', 0)]);
        await store.deleteStream(`${s}-t2`, { hard: true });
        const err = await store
          .appendToStreams([
            { streamName: `${s}-t1`, events: [ev('A', 1)] },
            { streamName: `${s}-t2`, events: [ev('A', 2)] },
          ])
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(StreamDeletedError);
        expect((err as StreamDeletedError).streamName).toBe(`${s}-t2`);
        expect(await store.readStream(`${s}-t1`)).toEqual([]);
      });

      it('bounds the whole call by the 1 MiB append limit (EventTooLargeError, nothing written), and the number of streams by MAX_STREAMS_PER_APPEND', async () => {
        const big = (n: number) => ({ type: 'A', data: { n, s: 'x'.repeat(600 * 1024) } });
        await expect(
          store.appendToStreams([
            { streamName: `${s}-z1`, events: [big(1)] },
            { streamName: `${s}-z2`, events: [big(2)] },
          ]),
        ).rejects.toBeInstanceOf(EventTooLargeError);
        expect(await store.readStream(`${s}-z1`)).toEqual([]);
        expect(await store.readStream(`${s}-z2`)).toEqual([]);
        const many = Array.from({ length: MAX_STREAMS_PER_APPEND + 1 }, (_, i) => ({ streamName: `${s}-y${i}`, events: [ev('A', i)] }));
        await expect(store.appendToStreams(many)).rejects.toBeInstanceOf(RangeError);
        expect(await store.readStream(`${s}-y0`)).toEqual([]);
        const ok = await store.appendToStreams(many.slice(0, MAX_STREAMS_PER_APPEND));
        expect(ok).toHaveLength(MAX_STREAMS_PER_APPEND);
      });
    });

    it('exports IdempotencyConflictError for callers that need to tell it apart', () => {
      expect(new IdempotencyConflictError('s', 'e').code).toBe('IDEMPOTENCY_CONFLICT');
    });
  });
}

async function readAllOf(store: EventStore, prefix: string): Promise<RecordedEvent[]> {
  return store.readAll({ filter: { streamPrefixes: [prefix] }, maxCount: 10_000 });
}
