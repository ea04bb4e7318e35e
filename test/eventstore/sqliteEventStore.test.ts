import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { IdempotencyConflictError } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { tempDir } from '../support/tmp.js';

describe('SqliteEventStore (embedded default)', () => {
  it('keeps acknowledged events across a reopen of the file (contracts §1: data survives restarts)', async () => {
    const path = join(tempDir(), 'events.sqlite');
    const a = new SqliteEventStore({ path });
    await a.appendToStream('s-1', [{ type: 'A', data: { n: 1 } }]);
    await a.close();
    const b = new SqliteEventStore({ path });
    expect((await b.readStream('s-1')).map((e) => e.data)).toEqual([{ n: 1 }]);
    await b.close();
  });

  it('refuses an event id stored in another stream, since ids are unique across the log', async () => {
    const store = new SqliteEventStore({ path: ':memory:' });
    const id = randomUUID();
    await store.appendToStream('s-x', [{ id, type: 'A', data: {} }]);
    await expect(store.appendToStream('s-y', [{ id, type: 'A', data: {} }])).rejects.toBeInstanceOf(IdempotencyConflictError);
    expect(await store.readStream('s-y')).toEqual([]);
    await store.close();
  });

  it('stores a large event compressed and a small one as JSON text, and reads both back as appended', async () => {
    const path = join(tempDir(), 'events.sqlite');
    const store = new SqliteEventStore({ path });
    const large = { records: Array.from({ length: 200 }, (_, i) => ({ i, unit: 'count/min', note: 'é✓ multi-byte' })) };
    await store.appendToStream('s-1', [
      { type: 'Small', data: { n: 1 } },
      { type: 'Large', data: large },
    ]);
    expect((await store.readStream('s-1')).map((e) => e.data)).toEqual([{ n: 1 }, large]);
    expect((await store.readAll()).map((e) => e.data)).toEqual([{ n: 1 }, large]);
    await store.close();
    const db = new Database(path, { readonly: true });
    const kinds = db.prepare('SELECT type, typeof(data) AS t, length(data) AS n FROM events ORDER BY position').all() as { type: string; t: string; n: number }[];
    db.close();
    expect(kinds.map((k) => [k.type, k.t])).toEqual([
      ['Small', 'text'],
      ['Large', 'blob'],
    ]);
    expect(kinds[1]!.n).toBeLessThan(JSON.stringify(large).length / 5);
  });

  it('reads rows written before compression (large JSON text) as before', async () => {
    const path = join(tempDir(), 'events.sqlite');
    await new SqliteEventStore({ path }).close();
    const legacy = { records: Array.from({ length: 100 }, (_, i) => ({ i, text: 'legacy row' })) };
    const db = new Database(path);
    db.prepare('INSERT INTO events (id, stream, revision, type, data, metadata, created_at) VALUES (?, ?, 0, ?, ?, NULL, ?)').run(randomUUID(), 's-old', 'Old', JSON.stringify(legacy), Date.now());
    db.prepare('INSERT INTO streams (stream, revision) VALUES (?, 0)').run('s-old');
    db.close();
    const store = new SqliteEventStore({ path });
    expect((await store.readStream('s-old')).map((e) => e.data)).toEqual([legacy]);
    await store.appendToStream('s-old', [{ type: 'New', data: legacy }], { expectedRevision: 0 });
    expect((await store.readAll()).map((e) => [e.type, e.data])).toEqual([
      ['Old', legacy],
      ['New', legacy],
    ]);
    await store.close();
  });

  it('bounds one read of the log by the size of the data it decodes, and a subscription still delivers every event in order', async () => {
    const store = new SqliteEventStore({ path: ':memory:', pollIntervalMs: 20 });
    const MiB = 1024 * 1024;
    for (let i = 0; i < 20; i++) await store.appendToStream(`s-${i}`, [{ type: 'Big', data: { i, blob: String(i % 10).repeat(MiB - 64) } }]);
    const first = await store.readAll({ maxCount: 500 });
    expect(first.length).toBeGreaterThan(0);
    expect(first.length).toBeLessThanOrEqual(9);
    const filtered = await store.readAll({ maxCount: 500, filter: { eventTypes: ['Big'] } });
    expect(filtered.length).toBe(first.length);
    const seen = await firstValueFrom(store.subscribeToAll({ filter: { eventTypes: ['Big'] } }).pipe(take(20), toArray()));
    expect(seen.map((e) => (e.data as { i: number }).i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const unfiltered = await firstValueFrom(store.subscribeToAll().pipe(take(20), toArray()));
    expect(unfiltered.map((e) => e.globalPosition)).toEqual(seen.map((e) => e.globalPosition));
    await store.close();
  });

  it('wakes a live subscription at once when another connection to the same file (another thread) appends, without waiting for the poll', async () => {
    const path = join(tempDir(), 'events.sqlite');
    const reader = new SqliteEventStore({ path, pollIntervalMs: 60_000 });
    const writer = new SqliteEventStore({ path, pollIntervalMs: 60_000 });
    const got = firstValueFrom(reader.subscribeToAll({ filter: { eventTypes: ['Ping'] } }).pipe(take(2), toArray()));
    // Let the subscription catch up and start waiting before the appends.
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await writer.appendToStream('s-1', [{ type: 'Ping', data: { n: 1 } }]);
    await writer.appendToStream('s-2', [{ type: 'Ping', data: { n: 2 } }]);
    const events = await got;
    expect(events.map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(Date.now() - started).toBeLessThan(5_000);
    await writer.close();
    await reader.close();
  });
  it('wakes live subscriptions, of this connection and of another to the same file, with the events of a multi-stream append, without waiting for the poll (issue 37: appendToStreams)', async () => {
    const path = join(tempDir(), 'events.sqlite');
    const writer = new SqliteEventStore({ path, pollIntervalMs: 60_000 });
    const reader = new SqliteEventStore({ path, pollIntervalMs: 60_000 });
    const live = (store: SqliteEventStore) => firstValueFrom(store.subscribeToAll({ filter: { eventTypes: ['Pong'] } }).pipe(take(2), toArray()));
    const [own, other] = [live(writer), live(reader)];
    // Let the subscriptions catch up and start waiting before the append.
    await new Promise((r) => setTimeout(r, 50));
    await writer.appendToStreams([
      { streamName: 'm-1', events: [{ type: 'Pong', data: { n: 1 } }] },
      { streamName: 'm-2', events: [{ type: 'Pong', data: { n: 2 } }] },
    ]);
    for (const events of await Promise.all([own, other])) expect(events.map((e) => [e.streamName, e.data])).toEqual([['m-1', { n: 1 }], ['m-2', { n: 2 }]]);
    await writer.close();
    await reader.close();
  });
});
