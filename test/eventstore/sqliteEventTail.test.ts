import { describe, expect, it } from 'vitest';
import { firstValueFrom, take, toArray, type Subscription } from 'rxjs';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { rowFilter, SqliteEventTail, type TailMember } from '../../src/eventstore/sqliteEventTail.js';
import type { EventRow } from '../../src/eventstore/sqliteEventRows.js';

const settle = () => new Promise((r) => setTimeout(r, 30));

function row(position: number, type: string, stream = `s-${position}`): EventRow {
  return { position, id: `id-${position}`, stream, revision: 0, type, data: JSON.stringify({ n: position }), metadata: null, created_at: 0 };
}

/** A log in memory that counts how often the tail reader queries it. */
function fakeLog() {
  const rows: EventRow[] = [];
  let reads = 0;
  return {
    rows,
    get reads() {
      return reads;
    },
    source: {
      rowsAfter(after: number, max: number) {
        reads += 1;
        return rows.filter((r) => r.position > after).slice(0, max)[Symbol.iterator]();
      },
      head: () => rows.at(-1)?.position ?? 0,
    },
  };
}

function member(types: string[] | undefined, got: RecordedEvent[]): TailMember {
  return { cursor: 0, stopped: false, matches: rowFilter(types && { eventTypes: types }), next: (e) => got.push(e), complete: () => {}, error: () => {} };
}

describe('shared tail reader of the embedded event store (issue 27)', () => {
  it('reads the new rows once per wake-up for all its subscribers, and hands each only the events its filter matches', async () => {
    const log = fakeLog();
    const tail = new SqliteEventTail(log.source, 60_000);
    const got = Array.from({ length: 25 }, () => [] as RecordedEvent[]);
    got.forEach((g, i) => tail.join(member(i % 2 ? ['A'] : ['B'], g)));
    log.rows.push(row(1, 'A'), row(2, 'B'), row(3, 'C'));
    tail.wake();
    tail.wake();
    await settle();
    expect(log.reads).toBe(1);
    got.forEach((g, i) => expect(g.map((e) => e.globalPosition)).toEqual(i % 2 ? [1] : [2]));
    tail.close();
  });

  it('hands every subscriber a copy of its own, so one that changes an event does not change what another sees', async () => {
    const log = fakeLog();
    const tail = new SqliteEventTail(log.source, 60_000);
    const a: RecordedEvent[] = [];
    const b: RecordedEvent[] = [];
    tail.join({ ...member(undefined, a), next: (e) => (a.push(e), ((e.data as { n: number }).n = -1)) });
    tail.join(member(undefined, b));
    log.rows.push(row(1, 'A'));
    tail.wake();
    await settle();
    expect(b[0]!.data).toEqual({ n: 1 });
    tail.close();
  });

  it('a subscriber joining behind the reader starts where the reader is, ahead of it where it read itself; nothing is handed twice', async () => {
    const log = fakeLog();
    log.rows.push(row(1, 'A'), row(2, 'A'));
    const tail = new SqliteEventTail(log.source, 60_000);
    const first: RecordedEvent[] = [];
    tail.join(member(['A'], first)); // at head 2
    log.rows.push(row(3, 'A'));
    const late: RecordedEvent[] = [];
    tail.join({ ...member(['A'], late), cursor: 3 }); // read up to 3 itself
    log.rows.push(row(4, 'A'));
    tail.wake();
    await settle();
    expect(first.map((e) => e.globalPosition)).toEqual([3, 4]);
    expect(late.map((e) => e.globalPosition)).toEqual([4]);
    tail.close();
  });

  it('every subscription of a store, at any checkpoint and with any filter, gets exactly the matching events in order, also when subscribing and unsubscribing inside a delivery', async () => {
    const store = new SqliteEventStore({ path: ':memory:', pollIntervalMs: 60_000 });
    const types = ['A', 'B', 'C'];
    const appendSome = async (from: number, n: number) => {
      await Promise.all(Array.from({ length: n }, (_, i) => store.appendToStream(`s${(from + i) % 7}-x`, [{ type: types[(from + i) % 3]!, data: { i: from + i } }])));
    };
    await appendSome(0, 30);
    const subs: { filter: string[] | undefined; after: number; got: number[]; sub?: Subscription }[] = [];
    for (const [k, filter] of [undefined, ['A'], ['B', 'C'], ['C']].entries()) {
      for (const after of [0, 10, 29]) subs.push({ filter, after: after + k, got: [] });
    }
    for (const s of subs) s.sub = store.subscribeToAll({ after: s.after, filter: s.filter && { eventTypes: s.filter } }).subscribe((e) => s.got.push(e.globalPosition));
    // One more subscription started from inside a delivery, and one that stops itself after two events.
    const nested: number[] = [];
    const stopper = firstValueFrom(store.subscribeToAll({ after: 40, filter: { eventTypes: ['A'] } }).pipe(take(2), toArray()));
    const starter = store.subscribeToAll({ after: 45 }).subscribe((e) => {
      if (e.globalPosition === 50) store.subscribeToAll({ after: 50 }).subscribe((n) => nested.push(n.globalPosition));
    });
    await appendSome(30, 40);
    await settle();
    await appendSome(70, 30);
    await settle();
    const all = await store.readAll({ maxCount: 1000 });
    expect(all).toHaveLength(100);
    for (const s of subs) {
      const want = all.filter((e) => e.globalPosition > s.after && (!s.filter || s.filter.includes(e.type))).map((e) => e.globalPosition);
      expect(s.got).toEqual(want);
      s.sub!.unsubscribe();
    }
    expect((await stopper).map((e) => e.type)).toEqual(['A', 'A']);
    expect(nested).toEqual(all.filter((e) => e.globalPosition > 50).map((e) => e.globalPosition));
    starter.unsubscribe();
    await store.close();
  });
});
