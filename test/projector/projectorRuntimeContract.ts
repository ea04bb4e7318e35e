import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventStore, RecordedEvent } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { listDeadLetters } from '../../src/projector/deadLetters.js';
import { defineProjection, type Projection } from '../../src/projector/projection.js';
import { ProjectorRuntime } from '../../src/projector/projectorRuntime.js';
import type { Doc, ReadStore } from '../../src/readstore/readStore.js';
import { shiftPositions } from '../support/shiftedPositions.js';

/**
 * Issue 20, finding 2: a projection batch that keeps failing is narrowed to the event that fails
 * alone, which is dead-lettered (recorded with its position, projection and error) while the
 * projection carries on; an operator replays it once the code is fixed; a rebuild keeps the live
 * state where a dead letter still fails and applies it in its place once it does not. Sequence
 * numbers (record ids) survive a rebuild. Every read-store adapter runs this.
 */
export function projectorRuntimeContract(name: string, makeReadStore: () => Promise<ReadStore>) {
  describe(`projector runtime: dead letters and sequences (${name})`, () => {
    let events: EventStore;
    let readStore: ReadStore;
    let runtime: ProjectorRuntime | null;
    let p: Projection;
    /** The projection's "code": fails on events whose data says poison while true. */
    let broken: boolean;
    let coll: string;

    beforeEach(async () => {
      events = new SqliteEventStore({ path: ':memory:' });
      readStore = await makeReadStore();
      runtime = null;
      broken = true;
      coll = `ticks_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
      p = defineProjection({
        name: `ticks_${coll}`,
        collections: [{ name: coll }],
        eventTypes: ['Tick'],
        sequenced: () => true,
        evolve: (e: RecordedEvent, sequence: number) => {
          const d = e.data as { n: number; poison?: boolean };
          if (d.poison && broken) throw new TypeError(`cannot read tick ${d.n}`);
          return [{ op: 'put', collection: coll, doc: { _id: `t${d.n}`, n: d.n, id: sequence } }];
        },
      });
    });
    afterEach(async () => {
      await runtime?.stop();
      await readStore.dropCollections([coll]);
      await readStore.close();
      await events.close();
    });

    const append = async (...ns: (number | 'poison')[]) => {
      let last = 0;
      for (const [i, n] of ns.entries()) {
        const data = n === 'poison' ? { n: 1000 + i, poison: true } : { n };
        last = (await events.appendToStream(`ticks-${randomUUID()}`, [{ type: 'Tick', data }])).lastPosition;
      }
      return last;
    };
    const start = async () => {
      runtime = new ProjectorRuntime(events, readStore, [p], undefined, { retry: { delaysMs: [5, 5, 5, 5] } });
      await runtime.start();
      return runtime;
    };
    const docs = async () => (await readStore.find<Doc & { n: number; id: number }>(coll, { sort: [['_id', 1]] })).map((d) => ({ n: d.n, id: d.id }));
    const mine = async () => (await listDeadLetters(readStore, { all: true })).filter((d) => d.projection === p.name);

    it('a batch that keeps failing on one event dead-letters that event alone, and the events after it apply', async () => {
      // All in the log before the runner starts: they arrive as one batch, which fails.
      const head = await append(1, 2, 'poison', 4, 5);
      const rt = await start();
      await rt.waitForIdle(head, 30_000);
      expect((await docs()).map((d) => d.n).sort()).toEqual([1, 2, 4, 5]);
      const [letter] = await mine();
      expect(letter).toMatchObject({ status: 'open', event_type: 'Tick', error: 'TypeError: cannot read tick 1002', attempts: 5, resolved_at: null });
      expect((await readStore.getCheckpoint(p.name))?.position).toBe(head);
      // Events appended later apply as usual.
      const later = await append(6);
      await rt.waitForIdle(later, 30_000);
      expect((await docs()).map((d) => d.n)).toContain(6);
    });

    it('replay-dead-letter applies it once the code is fixed; ids come from the dense sequence', async () => {
      const head = await append(1, 'poison', 3);
      const rt = await start();
      await rt.waitForIdle(head, 30_000);
      const [letter] = await mine();
      await expect(rt.replayDeadLetter(letter!._id)).rejects.toThrow(/cannot read tick/);
      expect((await mine())[0]!.status).toBe('open');
      broken = false;
      expect(await rt.replayDeadLetter(letter!._id)).toMatchObject({ status: 'replayed', checkpoint: head });
      expect((await mine())[0]).toMatchObject({ status: 'replayed', resolved_at: expect.any(String) });
      // Numbers 1 and 2 went to the events applied first; the replayed one got the next.
      expect(await docs()).toEqual([
        { n: 1, id: 1 },
        { n: 1001, id: 3 },
        { n: 3, id: 2 },
      ]);
      await expect(rt.replayDeadLetter(letter!._id)).rejects.toThrow(/replayed already/);
    });

    it('a rebuild equals the live state while the dead letter still fails, applies it in its place once it does, and keeps every id', async () => {
      const head = await append(1, 'poison', 3);
      const rt = await start();
      await rt.waitForIdle(head, 30_000);
      const live = await docs();
      await rt.stop();
      runtime = null;
      const rebuilder = new ProjectorRuntime(events, readStore, [p], undefined, { retry: { delaysMs: [1] } });
      await rebuilder.rebuild(undefined);
      expect(await docs()).toEqual(live);
      expect((await mine())[0]).toMatchObject({ status: 'open' });
      broken = false;
      await rebuilder.rebuild(undefined);
      expect((await mine())[0]).toMatchObject({ status: 'applied_by_rebuild' });
      // The events applied live keep their numbers; the one the live runner skipped got the next.
      expect(await docs()).toEqual([
        { n: 1, id: 1 },
        { n: 1001, id: 3 },
        { n: 3, id: 2 },
      ]);
    });

    it('positions of a large KurrentDB log (near 10^13) give ids far below 2^53, the same after a rebuild', async () => {
      const far = 10 ** 13;
      const shifted = shiftPositions(events, far);
      const head = await append(1, 2, 3);
      runtime = new ProjectorRuntime(shifted, readStore, [p]);
      await runtime.start();
      await runtime.waitForIdle(head + far, 30_000);
      const live = await docs();
      expect(live.map((d) => d.id)).toEqual([1, 2, 3]);
      await runtime.stop();
      runtime = null;
      await new ProjectorRuntime(shifted, readStore, [p]).rebuild(undefined);
      expect(await docs()).toEqual(live);
      expect((await readStore.getCheckpoint(p.name))?.position).toBe(head + far);
    });
  });
}
