/**
 * A store thread's entry for test/shared/storeThread.test.ts: a store whose calls answer, throw
 * the errors callers tell apart, never answer, or end the thread, as the test asks.
 */
import { ConcurrencyError } from '../../src/eventstore/eventStore.js';
import { serveStore } from '../../src/shared/storeThreadServer.js';
import { LostLeaseError } from '../../src/workqueue/workQueue.js';

await serveStore((options: { label: string }) => ({
  async echo(value: unknown) {
    return { label: options.label, value };
  },
  /** Answers after `turns` turns of the thread's event loop. */
  async later(turns: number) {
    for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
    return turns;
  },
  async refuse(kind: string) {
    if (kind === 'concurrency') throw new ConcurrencyError('user-1', 3, 'no_stream');
    if (kind === 'lease') throw new LostLeaseError('job-1', 7);
    if (kind === 'range') throw new RangeError('payload is over the limit');
    // What better-sqlite3 throws when another connection holds the write lock.
    throw Object.assign(new Error('database is locked'), { name: 'SqliteError', code: 'SQLITE_BUSY' });
  },
  /** A value that cannot cross threads. */
  async handle() {
    return { callback: () => {} };
  },
  stall: () => new Promise<never>(() => {}),
  /** Ends the thread without answering. */
  async crash() {
    setImmediate(() => process.exit(3));
    return new Promise<never>(() => {});
  },
  async close() {},
}));
