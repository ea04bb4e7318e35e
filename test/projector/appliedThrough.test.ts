import { join } from 'node:path';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import { appliedThrough } from '../../src/projector/appliedThrough.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { MongoReadStore } from '../../src/readstore/mongoReadStore.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../support/tmp.js';

/**
 * contracts §17: "readable in every view" is where every record projection stands against the log.
 * A projection is behind only on events of its own types, so one with an old checkpoint and nothing
 * of its types since does not hold the answer back.
 */
const dir = tempDir();
let n = 0;

function appliedThroughContract(backend: string, makeReadStore: () => Promise<ReadStore>) {
  describe(`appliedThrough on ${backend} (contracts §17)`, () => {
    let events: EventStore;
    let readStore: ReadStore;
    const pa = { name: `pa_${++n}`, eventTypes: ['a'] };
    const pb = { name: `pb_${n}`, eventTypes: ['b'] };

    beforeEach(async () => {
      events = new SqliteEventStore({ path: ':memory:' });
      readStore = await makeReadStore();
      // Positions 1 to 4: a, b, a, and an event neither projection reads.
      for (const type of ['a', 'b', 'a', 'c']) await events.appendToStream('s', [{ type, data: {} }]);
    });

    it('stops before the first event a projection has not applied', async () => {
      expect(await appliedThrough(events, readStore, [pa, pb])).toBe(0);
      await readStore.setCheckpoint(pa.name, 1, 'live');
      expect(await appliedThrough(events, readStore, [pa, pb])).toBe(1);
      await readStore.setCheckpoint(pb.name, 2, 'live');
      expect(await appliedThrough(events, readStore, [pa, pb])).toBe(2);
    });

    it('reaches the head when no projection has an event of its types left, however old its checkpoint', async () => {
      await readStore.setCheckpoint(pa.name, 3, 'live');
      await readStore.setCheckpoint(pb.name, 2, 'live');
      expect(await appliedThrough(events, readStore, [pa, pb])).toBe(4);
    });

    it('answers at most the bound it is given', async () => {
      await readStore.setCheckpoint(pa.name, 1, 'live');
      await readStore.setCheckpoint(pb.name, 2, 'live');
      expect(await appliedThrough(events, readStore, [pa, pb], 2)).toBe(2);
      expect(await appliedThrough(events, readStore, [pa, pb], 3)).toBe(2);
    });

    it('counts a rebuilding projection as having applied nothing (a rebuild is not what readers are served)', async () => {
      await readStore.setCheckpoint(pa.name, 3, 'rebuilding');
      await readStore.setCheckpoint(pb.name, 2, 'live');
      expect(await appliedThrough(events, readStore, [pa, pb])).toBe(0);
    });
  });
}

appliedThroughContract('embedded SQLite', async () => new SqliteReadStore({ path: join(dir, `read-${++n}.sqlite`) }));
const url = inject('mongodbUrl');
if (url) appliedThroughContract('MongoDB', async () => MongoReadStore.connect({ url, database: `wellstream_applied_${++n}` }));
else describe.skip('appliedThrough (MongoDB: no Docker engine or MONGODB_URL)', () => it('skipped', () => {}));
