import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { acquireMongoClient } from '../../src/readstore/mongoConnection.js';
import { errorText } from '../../src/workqueue/jobInput.js';
import { MongoWorkQueue } from '../../src/workqueue/mongoWorkQueue.js';
import { SqliteWorkQueue } from '../../src/workqueue/sqliteWorkQueue.js';
import type { NewJob, WorkQueue } from '../../src/workqueue/workQueue.js';
import { tempDir } from '../support/tmp.js';
import { memoryMongo } from './memoryMongo.js';

/**
 * contracts §19 (issue 35): what the queue keeps of a user can be removed whatever the jobs' state,
 * page by page; what it keeps of an error quotes no input; the last dead job of a key is found
 * (the ETL sweep's question). On every adapter.
 */
type Open = () => Promise<{ queue: WorkQueue; close(): Promise<void> }>;
const dir = tempDir();
const backends: [string, Open][] = [
  ['embedded SQLite', async () => {
    const queue = new SqliteWorkQueue({ path: join(dir, `jobs-${randomUUID()}.sqlite`) });
    return { queue, close: () => queue.close() };
  }],
  ['MongoDB adapter on an in-memory stand-in', async () => {
    const queue = new MongoWorkQueue(memoryMongo().db);
    await queue.ensureIndexes();
    return { queue, close: () => queue.close() };
  }],
];
const url = inject('mongodbUrl');
if (url) {
  backends.push(['MongoDB', async () => {
    const database = `wellstream_jobs_${randomUUID().slice(0, 8)}`;
    const queue = await MongoWorkQueue.connect({ url, database });
    return {
      queue,
      close: async () => {
        const handle = await acquireMongoClient(url);
        await handle.client.db(database).dropDatabase();
        await handle.release();
        await queue.close();
      },
    };
  }]);
}

describe.each(backends)('work queue erasure on %s (contracts §19)', (_name, open) => {
  const withQueue = async (body: (queue: WorkQueue) => Promise<void>) => {
    const { queue, close } = await open();
    try {
      await body(queue);
    } finally {
      await close();
    }
  };

  it('purgeNaming removes every job naming the user, in any state (dead, running, waiting, done), page by page, but the job it is told to keep; others stay', () =>
    withQueue(async (queue) => {
      const user = randomUUID();
      const other = randomUUID();
      const now = 1_000;
      const named: NewJob[] = [
        { kind: 'etl', key: `upload-${user}-abc`, payload: { stream: `upload-${user}-abc` } },
        { kind: 'sync.schedule', key: `${user}:oura`, payload: { user_id: user } },
        { kind: 'reactor.x', key: '42', payload: { stream: `user-${user}` } },
        { kind: 'pull', lock: `conn:${user}`, payload: {} },
      ];
      for (const job of named) await queue.enqueue(job, now);
      await queue.enqueue({ kind: 'etl', key: `upload-${other}-abc`, payload: { stream: `upload-${other}-abc` } }, now);
      await queue.enqueue({ kind: 'deletion', key: 'job-1', lock: `user:${user}`, payload: { userId: user } }, now);
      // One dead (its error naming the user), one running, one completed.
      const [dead] = await queue.claim({ kinds: ['etl'], n: 1, holder: 'h', leaseMs: 1_000, now });
      await queue.park(dead!.lease, { error: 'gave up', now });
      const [running] = await queue.claim({ kinds: ['reactor.x'], n: 1, holder: 'h', leaseMs: 1_000, now });
      const [done] = await queue.claim({ kinds: ['pull'], n: 1, holder: 'h', leaseMs: 1_000, now });
      await queue.complete(done!.lease, { now });
      const deletion = await queue.findLive('deletion', 'job-1');

      let after: string | null = null;
      let purged = 0;
      let pages = 0;
      do {
        const page: { purged: number; next: string | null } = await queue.purgeNaming(user, { except: { kind: 'deletion', key: 'job-1' }, after, limit: 2 });
        purged += page.purged;
        after = page.next;
        pages++;
      } while (after !== null && pages < 20);
      expect(after).toBeNull();
      expect(pages).toBeGreaterThanOrEqual(3);
      expect(purged).toBe(named.length);
      expect(await queue.get(dead!.job.id)).toBeNull();
      expect(await queue.get(running!.job.id)).toBeNull();
      expect(await queue.get(done!.job.id)).toBeNull();
      expect(await queue.findLive('sync.schedule', `${user}:oura`)).toBeNull();
      // The running job's holder is fenced off: its job is gone.
      await expect(queue.complete(running!.lease, { now })).rejects.toThrow();
      expect(await queue.get(deletion!.id)).not.toBeNull();
      expect(await queue.findLive('etl', `upload-${other}-abc`)).not.toBeNull();
    }));

  it('lastDead answers the latest dead job of a kind and key, none for a live or another key', () =>
    withQueue(async (queue) => {
      expect(await queue.lastDead('etl', 'upload-a')).toBeNull();
      await queue.enqueue({ kind: 'etl', key: 'upload-a' }, 0);
      const [first] = await queue.claim({ kinds: ['etl'], n: 1, holder: 'h', leaseMs: 1_000, now: 0 });
      await queue.park(first!.lease, { error: 'first', now: 10 });
      await queue.enqueue({ kind: 'etl', key: 'upload-a' }, 20);
      expect(await queue.lastDead('etl', 'upload-a')).toMatchObject({ id: first!.job.id, finishedAt: 10 });
      const [second] = await queue.claim({ kinds: ['etl'], n: 1, holder: 'h', leaseMs: 1_000, now: 20 });
      await queue.park(second!.lease, { error: 'second', now: 30 });
      expect(await queue.lastDead('etl', 'upload-a')).toMatchObject({ id: second!.job.id, finishedAt: 30 });
      expect(await queue.lastDead('etl.bulk', 'upload-a')).toBeNull();
      expect(await queue.lastDead('etl', 'upload-b')).toBeNull();
    }));

  it('an error is kept without the values it quotes: quoted spans and words with digits go, the wording stays, first line only', () =>
    withQueue(async (queue) => {
      await queue.enqueue({ kind: 'etl', key: 'k' }, 0);
      const [c] = await queue.claim({ kinds: ['etl'], n: 1, holder: 'h', leaseMs: 1_000, now: 0 });
      await queue.park(c!.lease, { error: `start_date "2024-13-01T10:00" of 0f3c2a1e-uuid is not a valid date and time\n    at parse (x.ts:1:2)`, now: 1 });
      expect((await queue.get(c!.job.id))!.lastError).toBe('start_date "…" of # is not a valid date and time');
    }));
});

describe('errorText: the rule of what the queue keeps of an error (contracts §19)', () => {
  it.each([
    ["value 'abc def' refused", 'value "…" refused'],
    ['Unexpected token x in JSON at position 42', 'Unexpected token x in JSON at position #'],
    ['RecordError: "unterminated', 'RecordError: "…"'],
    ['cannot convert mg/dL to mmol/L', 'cannot convert mg/dL to mmol/L'],
  ])('%s → %s', (input, kept) => expect(errorText(input)).toBe(kept));
});
