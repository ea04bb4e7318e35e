import { describe, expect, it } from 'vitest';
import { syncRunJob } from '../../src/processes/sync/syncJobs.js';
import { startTestApp } from '../support/server.js';

/**
 * Issue 36 §7 (the demo's restart: both reconnect backfills failed with invalid_token): a stopping
 * service went on pulling while it waited for a running import, so it took the new start's
 * backfills and called its own, older sandbox address with the new grant's tokens. Closing a
 * context stops every claimer at once, before it waits for anything.
 */
describe('closing the context stops taking work at once (issue 36 §7)', () => {
  it('while a running job holds the close, a pull due now is not claimed by the closing process', { timeout: 60_000 }, async () => {
    const t = await startTestApp();
    const { jobs, sync } = t.ctx;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let running!: () => void;
    const started = new Promise<void>((resolve) => (running = resolve));
    // A job that does not look at its signal, as an import on an ETL thread did not.
    jobs.register({ kind: 'test.unstoppable', concurrency: 1, run: async () => (running(), held) });
    await jobs.queue.enqueue({ kind: 'test.unstoppable', key: 'one' });
    jobs.kick();
    await started;

    const closing = t.ctx.close();
    const { job } = await jobs.queue.enqueue(syncRunJob({ stream: 'sync-run-after-close', user_id: 'someone', provider: 'oura', trigger: 'backfill', due: new Date().toISOString() }));
    expect(await sync.runDue()).toEqual([]);
    expect((await jobs.queue.get(job.id))?.state).toBe('available');
    release();
    await closing;
    await t.app.close();
  });
});
