import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
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
});
