import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { defineProjection } from '../../src/projector/projection.js';
import { ProjectorRuntime } from '../../src/projector/projectorRuntime.js';
import type { ApplyBatch } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';

/**
 * Issue 37 ("work after the append per batch, not per upload"): the read store commits the
 * batches asked for in one turn of the event loop together (sqliteReadStore.ts `write`). That
 * pays only if the runners of a thread ask in the same turn: the shared tail of the event store
 * hands an append to every live subscription of the thread in one step, and a runner goes from
 * there to its applyBatch without waiting on a timer or I/O (the embedded store's reads resolve
 * at once), sequence numbers included.
 */

const projection = (name: string, options: { sequenced?: boolean } = {}) =>
  defineProjection({
    name,
    collections: [{ name: `${name}_docs` }],
    eventTypes: ['UploadAccepted'],
    sequenced: options.sequenced ? () => true : undefined,
    evolve: (e, sequence) => [{ op: 'update', collection: `${name}_docs`, id: 'all', set: { last: e.globalPosition, sequence }, inc: { n: 1 }, upsert: true }],
  });

describe('projection runners of one thread: the batches of one append asked for in one turn', () => {
  it('every runner woken by an append asks for its batch in the same turn, so they share one commit, and all hear of it in the same turn', async () => {
    const events = new SqliteEventStore({ path: ':memory:' });
    const readStore = new SqliteReadStore({ path: ':memory:' });
    // Turns of the event loop, counted by an immediate that schedules itself again each turn.
    let turn = 0;
    let counting = true;
    const count = () => setImmediate(() => {
      turn++;
      if (counting) count();
    });
    count();
    const calls: { projection: string; position: number; askedIn: number; answeredIn?: number }[] = [];
    const apply = readStore.applyBatch.bind(readStore);
    readStore.applyBatch = async (batch: ApplyBatch) => {
      const call: (typeof calls)[number] = { projection: batch.projection, position: batch.position, askedIn: turn };
      calls.push(call);
      await apply(batch);
      call.answeredIn = turn;
    };
    const names = ['uploads', 'coverage', 'freshness'];
    const runtime = new ProjectorRuntime(events, readStore, [projection('uploads'), projection('coverage', { sequenced: true }), projection('freshness')]);
    await runtime.start();
    // The first append brings every runner to the shared tail; the second is the one measured.
    const first = await events.appendToStream('upload-1', [{ type: 'UploadAccepted', data: {} }]);
    await runtime.waitForIdle(first.lastPosition);
    const second = await events.appendToStream('upload-2', [{ type: 'UploadAccepted', data: {} }]);
    await runtime.waitForIdle(second.lastPosition);
    counting = false;

    const measured = calls.filter((c) => c.position === second.lastPosition);
    expect(measured.map((c) => c.projection).sort()).toEqual([...names].sort());
    expect(new Set(measured.map((c) => c.askedIn)).size).toBe(1);
    expect(new Set(measured.map((c) => c.answeredIn)).size).toBe(1);
    expect(await readStore.get('coverage_docs', 'all')).toMatchObject({ n: 2, last: second.lastPosition, sequence: 2 });
    await runtime.stop();
    await readStore.close();
    await events.close();
  });
});
