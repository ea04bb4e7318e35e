import { describe, expect, it } from 'vitest';
import { StreamDeletedError } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';

/**
 * Writes commit in the order they were asked for: a deletion waits for the appends queued before
 * it (issue 14: `deleteStream` committed outside the group-commit queue, so an earlier append
 * could land after a later delete).
 */
describe('SqliteEventStore: deletions in the group-commit queue', () => {
  it('lands an append queued before a hard delete first, so the delete erases it and the append is acknowledged', async () => {
    const store = new SqliteEventStore({ path: ':memory:' });
    await store.appendToStream('s-1', [{ type: 'A', data: { n: 0 } }]);
    const append = store.appendToStream('s-1', [{ type: 'A', data: { n: 1 } }], { expectedRevision: 0 });
    const deletion = store.deleteStream('s-1', { hard: true });
    await expect(append).resolves.toMatchObject({ nextExpectedRevision: 1, replayed: false });
    await deletion;
    await expect(store.readStream('s-1')).rejects.toBeInstanceOf(StreamDeletedError);
    expect((await store.readAll()).filter((e) => e.streamName === 's-1')).toEqual([]);
    await store.close();
  });

  it('lets an append queued after a soft delete start the stream again, never the other way round', async () => {
    const store = new SqliteEventStore({ path: ':memory:' });
    await store.appendToStream('s-2', [{ type: 'A', data: { n: 0 } }]);
    const before = store.appendToStream('s-2', [{ type: 'A', data: { n: 1 } }]);
    const deletion = store.deleteStream('s-2', { expectedRevision: 1 });
    const after = store.appendToStream('s-2', [{ type: 'A', data: { n: 2 } }], { expectedRevision: 'no_stream' });
    await Promise.all([before, deletion, after]);
    expect((await store.readStream('s-2')).map((e) => e.data)).toEqual([{ n: 2 }]);
    await store.close();
  });

  it('answers a deletion refused on its expected revision with a concurrency error and leaves the group alone', async () => {
    const store = new SqliteEventStore({ path: ':memory:' });
    const a = store.appendToStream('s-3', [{ type: 'A', data: {} }]);
    const d = store.deleteStream('s-3', { expectedRevision: 5 });
    const b = store.appendToStream('s-4', [{ type: 'B', data: {} }]);
    await expect(d).rejects.toMatchObject({ code: 'CONCURRENCY' });
    await Promise.all([a, b]);
    expect((await store.readAll()).map((e) => e.streamName)).toEqual(['s-3', 's-4']);
    await store.close();
  });
});
