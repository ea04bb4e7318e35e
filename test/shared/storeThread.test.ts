import { describe, expect, it } from 'vitest';
import { ConcurrencyError } from '../../src/eventstore/eventStore.js';
import { StoreThread } from '../../src/shared/storeThread.js';
import { isBusy } from '../../src/shared/sqliteWriteLock.js';
import { LostLeaseError } from '../../src/workqueue/workQueue.js';

const fixture = new URL('./storeThreadFixture.ts', import.meta.url);
const start = (label = 'a') => StoreThread.start(fixture, { label }, { name: 'test store', errors: [ConcurrencyError, LostLeaseError] });

/**
 * Issue 37: a store on a thread of its own answers its caller as the store in the caller's thread
 * would, errors included, and a thread that dies never leaves a caller waiting.
 */
describe('a store on a thread of its own (issue 37)', () => {
  it('is constructed on the thread from the options it was started with, and answers each call with the store\'s value', async () => {
    const thread = await start('opened-with-this');
    try {
      expect(await thread.call('echo', [{ n: 1, at: new Date(0) }])).toEqual({ label: 'opened-with-this', value: { n: 1, at: new Date(0) } });
      expect(await Promise.all([thread.call('later', [3]), thread.call('later', [0])])).toEqual([3, 0]);
    } finally {
      await thread.close();
    }
  });

  it('refusals come back as the classes callers test with instanceof, with their fields; a SQLite error keeps its code (busy is still busy)', async () => {
    const thread = await start();
    try {
      const concurrency = await thread.call('refuse', ['concurrency']).catch((e: unknown) => e);
      expect(concurrency).toBeInstanceOf(ConcurrencyError);
      expect(concurrency).toMatchObject({ code: 'CONCURRENCY', streamName: 'user-1', expected: 3, actual: 'no_stream', name: 'ConcurrencyError' });
      expect((concurrency as Error).message).toBe('stream user-1: expected revision 3, actual no_stream');
      const lease = await thread.call('refuse', ['lease']).catch((e: unknown) => e);
      expect(lease).toBeInstanceOf(LostLeaseError);
      expect(lease).toMatchObject({ code: 'JOB_LEASE_LOST', jobId: 'job-1', generation: 7 });
      await expect(thread.call('refuse', ['range'])).rejects.toBeInstanceOf(RangeError);
      const busy = await thread.call('refuse', ['busy']).catch((e: unknown) => e);
      expect(busy).toBeInstanceOf(Error);
      expect(busy).toMatchObject({ name: 'SqliteError', code: 'SQLITE_BUSY', message: 'database is locked' });
      expect(isBusy(busy)).toBe(true);
      await expect(thread.call('noSuchMethod', [])).rejects.toThrow(/no method noSuchMethod/);
      // An answer that cannot be cloned fails its own call, not the others answered with it.
      const [handle, echo] = await Promise.allSettled([thread.call('handle', []), thread.call('echo', [1])]);
      expect(handle).toMatchObject({ status: 'rejected', reason: { name: 'DataCloneError' } });
      expect(echo).toMatchObject({ status: 'fulfilled', value: { value: 1 } });
    } finally {
      await thread.close();
    }
  });

  it('a thread that dies fails every call it had, never leaving one waiting; the next call starts another thread', async () => {
    const thread = await start('again');
    try {
      const stalled = thread.call('stall', []).catch((e: unknown) => e);
      const crashed = thread.call('crash', []).catch((e: unknown) => e);
      expect(await stalled).toBeInstanceOf(Error);
      expect(String(await stalled)).toMatch(/test store thread ended \(it exited with code 3\) before it answered/);
      expect(String(await crashed)).toMatch(/ended/);
      expect(await thread.call('echo', [2])).toEqual({ label: 'again', value: 2 });
    } finally {
      await thread.close();
    }
  });

  it('closing answers the calls already made, closes the store and ends the thread; a call after it is refused', async () => {
    const thread = await start();
    const before = thread.call('later', [20]);
    await thread.close();
    expect(await before).toBe(20);
    await expect(thread.call('echo', [1])).rejects.toThrow(/closed/);
  });

  it('a store whose opening fails fails the start', async () => {
    await expect(StoreThread.start(new URL('./noSuchEntry.ts', import.meta.url), {}, { name: 'missing', errors: [] })).rejects.toThrow();
  });
});
