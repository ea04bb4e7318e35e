import { join } from 'node:path';
import Database from 'better-sqlite3';
import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ConcurrencyError, StreamDeletedError } from '../../src/eventstore/eventStore.js';
import { ThreadedSqliteEventStore } from '../../src/eventstore/threadedSqliteEventStore.js';
import { tempDir } from '../support/tmp.js';

/**
 * Issue 37: the service's embedded event store writes on a thread of its own. "The 202 still
 * means durable" (contracts §3): a write is answered only once its group committed.
 */
describe('the embedded event store with its writes on a writer thread (issue 37)', () => {
  it('an append is answered only once committed: another connection to the file reads it as soon as the answer arrives', async () => {
    const path = join(tempDir(), 'events.sqlite');
    const store = await ThreadedSqliteEventStore.open({ path });
    const other = new Database(path, { readonly: true });
    try {
      const appends = Array.from({ length: 20 }, (_, i) => store.appendToStream(`s-${i}`, [{ type: 'A', data: { i } }]));
      for (const [i, append] of appends.entries()) {
        const { lastPosition } = await append;
        expect(other.prepare('SELECT stream FROM events WHERE position = ?').get(lastPosition)).toEqual({ stream: `s-${i}` });
      }
    } finally {
      other.close();
      await store.close();
    }
  });

  it('writes asked for one after another land in that order (an append asked for before a deletion never lands after it), refusals as their classes', async () => {
    const store = await ThreadedSqliteEventStore.open({ path: join(tempDir(), 'events.sqlite') });
    try {
      const appended = store.appendToStream('user-1', [{ type: 'A', data: {} }], { expectedRevision: 'no_stream' });
      const deleted = store.deleteStream('user-1', { hard: true });
      const late = store.appendToStream('user-1', [{ type: 'B', data: {} }]);
      expect((await appended).nextExpectedRevision).toBe(0);
      await deleted;
      await expect(late).rejects.toBeInstanceOf(StreamDeletedError);
      await expect(store.readStream('user-1')).rejects.toBeInstanceOf(StreamDeletedError);
      await store.appendToStream('user-2', [{ type: 'A', data: {} }]);
      await expect(store.appendToStream('user-2', [{ type: 'A', data: {} }], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(ConcurrencyError);
    } finally {
      await store.close();
    }
  });

  it('a live subscription of this thread hears an append the writer thread made, without waiting for its poll', async () => {
    const store = await ThreadedSqliteEventStore.open({ path: join(tempDir(), 'events.sqlite'), pollIntervalMs: 3_600_000 });
    try {
      await store.appendToStream('s-0', [{ type: 'A', data: { n: 0 } }]);
      const heard = firstValueFrom(store.subscribeToAll().pipe(take(2), toArray()));
      // The subscriber reaches the tail before the next append.
      await new Promise((r) => setImmediate(r));
      await store.appendToStream('s-1', [{ type: 'A', data: { n: 1 } }]);
      expect((await heard).map((e) => e.data)).toEqual([{ n: 0 }, { n: 1 }]);
    } finally {
      await store.close();
    }
  });

  it('closing answers the writes already asked for before the writer thread ends', async () => {
    const path = join(tempDir(), 'events.sqlite');
    const store = await ThreadedSqliteEventStore.open({ path });
    const pending = store.appendToStream('s-1', [{ type: 'A', data: {} }]);
    await store.close();
    expect((await pending).nextExpectedRevision).toBe(0);
    const reopened = await ThreadedSqliteEventStore.open({ path });
    expect(await reopened.readStream('s-1')).toHaveLength(1);
    await reopened.close();
  });
});
