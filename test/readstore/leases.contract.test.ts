import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { LeaseLostError } from '../../src/readstore/leases.js';
import { MongoReadStore } from '../../src/readstore/mongoReadStore.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../support/tmp.js';

/**
 * Leases and fencing (issue 14: one writer per projection, reactor and job across processes).
 * Times are passed in, so expiry is a value, not a wait.
 */
function leaseContract(name: string, open: () => Promise<ReadStore>) {
  describe(`Leases: ${name}`, () => {
    const unique = () => `lease-${Math.random().toString(36).slice(2)}`;

    it('gives a free lease to one holder, refuses it to another until it expires, then hands it on one generation up', async () => {
      const store = await open();
      const leases = store.leases!();
      const n = unique();
      const a = await leases.acquire(n, 'proc-a', 10_000, 1_000);
      expect(a).toMatchObject({ holder: 'proc-a', generation: 1, expiresAt: 11_000 });
      expect(await leases.acquire(n, 'proc-b', 10_000, 5_000)).toBeNull();
      // The holder asking again extends its own holding: same generation.
      expect(await leases.acquire(n, 'proc-a', 10_000, 6_000)).toMatchObject({ generation: 1, expiresAt: 16_000 });
      const b = await leases.acquire(n, 'proc-b', 10_000, 16_001);
      expect(b).toMatchObject({ holder: 'proc-b', generation: 2 });
      // The old holder's renewal fails: the lease is lost to it.
      expect(await leases.renew(a!, 10_000, 16_002)).toBeNull();
      expect(await leases.renew(b!, 10_000, 20_000)).toMatchObject({ generation: 2, expiresAt: 30_000 });
      await store.close();
    });

    it('lets exactly one of several racing holders take a free lease', async () => {
      const store = await open();
      const leases = store.leases!();
      const n = unique();
      const got = await Promise.all(['p1', 'p2', 'p3', 'p4'].map((h) => leases.acquire(n, h, 10_000, 1_000)));
      expect(got.filter((l) => l !== null)).toHaveLength(1);
      await store.close();
    });

    it('frees a released lease at once, and the next holding has a higher generation', async () => {
      const store = await open();
      const leases = store.leases!();
      const n = unique();
      const a = (await leases.acquire(n, 'proc-a', 10_000, 1_000))!;
      await leases.release(a);
      expect(await leases.acquire(n, 'proc-b', 10_000, 1_001)).toMatchObject({ holder: 'proc-b', generation: 2 });
      await store.close();
    });

    it('refuses a batch fenced by a lost generation and keeps the successor’s checkpoint (no write after losing the lease)', async () => {
      const store = await open();
      const leases = store.leases!();
      const projection = unique();
      await store.ensureCollections([{ name: 'fenced_docs' }]);
      const old = (await leases.acquire(projection, 'proc-a', 10_000, 1_000))!;
      const batch = (from: number, to: number, generation: number, id: string) => ({
        projection,
        expectedPosition: from,
        position: to,
        mode: 'live' as const,
        lastEventAt: null,
        changes: [{ op: 'put' as const, collection: 'fenced_docs', doc: { _id: id }, position: to, index: 0 }],
        fence: { lease: projection, generation },
      });
      await store.applyBatch(batch(0, 5, old.generation, `${projection}-a`));
      const successor = (await leases.acquire(projection, 'proc-b', 10_000, 20_000))!;
      await expect(store.applyBatch(batch(5, 9, old.generation, `${projection}-stale`))).rejects.toSatisfy(
        (e: unknown) => e instanceof LeaseLostError || (e as { code?: string }).code === 'CHECKPOINT_MISMATCH',
      );
      expect(await store.get('fenced_docs', `${projection}-stale`)).toBeNull();
      await store.applyBatch(batch(5, 7, successor.generation, `${projection}-b`));
      expect((await store.getCheckpoint(projection))?.position).toBe(7);
      await store.close();
    });

    it('refuses changes fenced by a lost generation outside any projection and keeps the successor’s (issue 26: fenced webhook outcomes)', async () => {
      const store = await open();
      const leases = store.leases!();
      const name = unique();
      await store.ensureCollections([{ name: 'fenced_docs' }]);
      const old = (await leases.acquire(name, 'proc-a', 10_000, 1_000))!;
      const put = (v: string) => [{ op: 'update' as const, collection: 'fenced_docs', id: `${name}-d`, set: { v }, upsert: true }];
      await store.applyChanges(put('a'), { fence: { lease: name, generation: old.generation } });
      const successor = (await leases.acquire(name, 'proc-b', 10_000, 20_000))!;
      await store.applyChanges(put('b'), { fence: { lease: name, generation: successor.generation } });
      await expect(store.applyChanges(put('stale'), { fence: { lease: name, generation: old.generation } })).rejects.toBeInstanceOf(LeaseLostError);
      expect(await store.get('fenced_docs', `${name}-d`)).toMatchObject({ v: 'b' });
      await store.close();
    });

    it('never moves a checkpoint backwards: a batch ending before its start is refused', async () => {
      const store = await open();
      const projection = unique();
      await store.applyBatch({ projection, expectedPosition: 0, position: 10, mode: 'live', lastEventAt: null, changes: [] });
      await expect(store.applyBatch({ projection, expectedPosition: 10, position: 4, mode: 'live', lastEventAt: null, changes: [] })).rejects.toMatchObject({
        code: 'CHECKPOINT_MISMATCH',
      });
      expect((await store.getCheckpoint(projection))?.position).toBe(10);
      await store.close();
    });
  });
}

const dir = tempDir();
leaseContract('embedded SQLite', async () => new SqliteReadStore({ path: join(dir, 'read.sqlite') }));

const url = inject('mongodbUrl');
if (url) leaseContract('MongoDB', async () => MongoReadStore.connect({ url, database: 'wellstream_contract' }));
else describe.skip('Leases: MongoDB (no Docker engine or MONGODB_URL)', () => it('skipped', () => {}));
