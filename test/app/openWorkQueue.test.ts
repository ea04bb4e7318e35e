import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openWorkQueue } from '../../src/app/openWorkQueue.js';
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
});
