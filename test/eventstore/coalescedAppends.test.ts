import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CoalescedAppends } from '../../src/eventstore/coalescedAppends.js';
import { ConcurrencyError, IdempotencyConflictError, MAX_STREAMS_PER_APPEND, StreamDeletedError, type EventStore } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { ThreadedSqliteEventStore } from '../../src/eventstore/threadedSqliteEventStore.js';
import { StoreFailureError } from '../../src/shared/transientErrors.js';
import { tempDir } from '../support/tmp.js';
import { eventStoreContract } from './eventStoreContract.js';

const dir = tempDir();
let n = 0;
const embedded = () => new SqliteEventStore({ path: join(dir, `events-${n++}.sqlite`), pollIntervalMs: 20 });
const threaded = () => ThreadedSqliteEventStore.open({ path: join(dir, `events-${n++}.sqlite`), pollIntervalMs: 20 });

// Issue 37: the port's whole contract holds through the decorator, each append of a turn being sent in one call.
eventStoreContract('embedded SQLite, appends of a turn coalesced', async () => new CoalescedAppends(embedded()));
eventStoreContract('embedded SQLite on a writer thread, appends of a turn coalesced', async () => new CoalescedAppends(await threaded()));

const ev = (type: string, n = 0, id?: string) => ({ type, data: { n }, ...(id ? { id } : {}) });

for (const [name, open] of [
  ['embedded', async () => embedded()],
  ['writer thread', threaded],
] as const) {
  describe(`appends of one turn as one multi-stream append (issue 37), ${name}`, () => {
    let inner: EventStore;
    let store: CoalescedAppends;
    const setUp = async () => {
      inner = await open();
      store = new CoalescedAppends(inner);
      return { combined: vi.spyOn(inner, 'appendToStreams'), lone: vi.spyOn(inner, 'appendToStream') };
    };
    afterEach(async () => store.close());

    it('sends the appends of a turn as one appendToStreams call and answers each caller with its own result', async () => {
      const { combined, lone } = await setUp();
      const results = await Promise.all([0, 1, 2].map((i) => store.appendToStream(`s-${i}`, [ev('A', i), ev('B', i)], { expectedRevision: 'no_stream' })));
      expect(combined).toHaveBeenCalledTimes(1);
      expect(lone).not.toHaveBeenCalled();
      for (const [i, r] of results.entries()) {
        const read = await inner.readStream(`s-${i}`);
        expect(read.map((e) => [e.type, e.data.n])).toEqual([['A', i], ['B', i]]);
        expect(r).toEqual({ nextExpectedRevision: 1, lastPosition: read[1]!.globalPosition, replayed: false });
      }
    });

    it('an append alone in its turn goes as appendToStream', async () => {
      const { combined, lone } = await setUp();
      expect((await store.appendToStream('s-1', [ev('A')])).nextExpectedRevision).toBe(0);
      expect(lone).toHaveBeenCalledTimes(1);
      expect(combined).not.toHaveBeenCalled();
    });

    it('answers replayed to an append sent again with the same event ids, beside new appends, and stores nothing twice', async () => {
      const { combined } = await setUp();
      const id = randomUUID();
      const first = await store.appendToStream('s-r', [ev('A', 1, id)], { expectedRevision: 'no_stream' });
      const [again, other] = await Promise.all([
        store.appendToStream('s-r', [ev('A', 1, id)], { expectedRevision: 'no_stream' }),
        store.appendToStream('s-o', [ev('B')]),
      ]);
      expect(combined).toHaveBeenCalledTimes(1);
      expect(again).toEqual({ ...first, replayed: true });
      expect(other.replayed).toBe(false);
      expect(await inner.readStream('s-r')).toHaveLength(1);
    });

    it('a conflict on one of several streams fails only its caller: the others are written, each caller gets what a lone append answers', async () => {
      await setUp();
      await inner.appendToStream('s-1', [ev('A')]);
      const answers = await Promise.allSettled([
        store.appendToStream('s-0', [ev('A')], { expectedRevision: 'no_stream' }),
        store.appendToStream('s-1', [ev('B')], { expectedRevision: 'no_stream' }),
        store.appendToStream('s-2', [ev('C')], { expectedRevision: 'no_stream' }),
      ]);
      expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      const refused = (answers[1] as PromiseRejectedResult).reason as ConcurrencyError;
      expect(refused).toBeInstanceOf(ConcurrencyError);
      expect([refused.streamName, refused.actual]).toEqual(['s-1', 0]);
      expect((await inner.readStream('s-0')).map((e) => e.type)).toEqual(['A']);
      expect((await inner.readStream('s-1')).map((e) => e.type)).toEqual(['A']);
      expect((await inner.readStream('s-2')).map((e) => e.type)).toEqual(['C']);
    });

    it('a tombstoned stream among several fails its caller with StreamDeletedError, the others are written', async () => {
      await setUp();
      await inner.deleteStream('s-gone', { hard: true });
      const answers = await Promise.allSettled([store.appendToStream('s-gone', [ev('A')]), store.appendToStream('s-live', [ev('A')])]);
      expect((answers[0] as PromiseRejectedResult).reason).toBeInstanceOf(StreamDeletedError);
      expect(answers[1]!.status).toBe('fulfilled');
      expect(await inner.readStream('s-live')).toHaveLength(1);
    });

    it('an event id stored in another stream fails its caller with IdempotencyConflictError, the others are written', async () => {
      await setUp();
      const id = randomUUID();
      await inner.appendToStream('s-a', [ev('A', 0, id)]);
      const answers = await Promise.allSettled([store.appendToStream('s-b', [ev('A', 0, id)]), store.appendToStream('s-c', [ev('A')])]);
      expect((answers[0] as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyConflictError);
      expect(answers[1]!.status).toBe('fulfilled');
    });

    it('two appends to one stream in one turn land in the order asked: the second waits for the first', async () => {
      await setUp();
      const [first, second, other] = await Promise.all([
        store.appendToStream('s-1', [ev('A')], { expectedRevision: 'no_stream' }),
        store.appendToStream('s-1', [ev('B')], { expectedRevision: 0 }),
        store.appendToStream('s-2', [ev('C')]),
      ]);
      expect([first.nextExpectedRevision, second.nextExpectedRevision, other.nextExpectedRevision]).toEqual([0, 1, 0]);
      expect(second.lastPosition).toBeGreaterThan(first.lastPosition);
      expect((await inner.readStream('s-1')).map((e) => e.type)).toEqual(['A', 'B']);
    });

    it('cuts a turn with more streams than one call takes into calls within the limit, all written', async () => {
      const { combined } = await setUp();
      const count = MAX_STREAMS_PER_APPEND * 2 + 3;
      const results = await Promise.all(Array.from({ length: count }, (_, i) => store.appendToStream(`s-${i}`, [ev('A', i)])));
      expect(combined).toHaveBeenCalledTimes(3);
      for (const [args] of combined.mock.calls) expect(args.length).toBeLessThanOrEqual(MAX_STREAMS_PER_APPEND);
      expect(new Set(results.map((r) => r.lastPosition)).size).toBe(count);
      expect(await inner.readAll({ maxCount: 1000 })).toHaveLength(count);
    });

    it('a deletion asked for after an append lands after it', async () => {
      await setUp();
      const appended = store.appendToStream('s-1', [ev('A')], { expectedRevision: 'no_stream' });
      const deleted = store.deleteStream('s-1', { hard: true });
      expect((await appended).nextExpectedRevision).toBe(0);
      await deleted;
      await expect(store.appendToStream('s-1', [ev('B')])).rejects.toBeInstanceOf(StreamDeletedError);
    });

    it('a store failing for a while fails every caller of the call with its error, none is sent again', async () => {
      const { combined, lone } = await setUp();
      const failure = new StoreFailureError('disk I/O error', 'io');
      combined.mockRejectedValueOnce(failure);
      const answers = await Promise.allSettled([store.appendToStream('s-1', [ev('A')]), store.appendToStream('s-2', [ev('A')])]);
      expect(answers.map((a) => (a as PromiseRejectedResult).reason)).toEqual([failure, failure]);
      expect(lone).not.toHaveBeenCalled();
      expect(await inner.readAll()).toHaveLength(0);
    });
  });
}
