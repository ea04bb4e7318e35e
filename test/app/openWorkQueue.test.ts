import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openWorkQueue } from '../../src/app/openWorkQueue.js';
import { LostLeaseError } from '../../src/workqueue/workQueue.js';
import { tempDir } from '../support/tmp.js';

describe('openWorkQueue (issue 26)', () => {
  it('the embedded default keeps the queue in DATA_DIR/jobs.sqlite, and a reopened queue finds its jobs', async () => {
    const dataDir = join(tempDir(), 'data');
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv);
    const queue = await openWorkQueue(config);
    expect(queue.backend).toBe('sqlite');
    expect(existsSync(join(dataDir, 'jobs.sqlite'))).toBe(true);
    const { job } = await queue.enqueue({ kind: 'pull', key: 'conn-1' });
    await queue.close();
    const reopened = await openWorkQueue(config);
    expect(await reopened.findLive('pull', 'conn-1')).toEqual(job);
    await reopened.close();
  });

  it('issue 37: the service\'s queue runs on a thread of its own over the same file the CLI opens in its thread; a queue given a clock stays in-thread and keeps it', async () => {
    const dataDir = join(tempDir(), 'data');
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv);
    const service = await openWorkQueue(config, {}, { thread: true });
    const cli = await openWorkQueue(config);
    try {
      const { job } = await service.enqueue({ kind: 'pull', key: 'conn-1' });
      expect(await cli.findLive('pull', 'conn-1')).toEqual(job);
      const [claimed] = await cli.claim({ kinds: ['pull'], n: 1, holder: 'cli', leaseMs: 10_000 });
      // The lease the CLI holds fences the service's stale writes off, across the thread too.
      await expect(service.complete({ ...claimed!.lease, generation: 0 })).rejects.toBeInstanceOf(LostLeaseError);
      await service.complete(claimed!.lease);
      expect(await service.get(job.id)).toMatchObject({ state: 'completed' });
      const clocked = await openWorkQueue(config, { clock: () => 42 }, { thread: true });
      expect((await clocked.enqueue({ kind: 'pull', key: 'conn-2' })).job.createdAt).toBe(42);
      await clocked.close();
    } finally {
      await service.close();
      await cli.close();
    }
  });
});
