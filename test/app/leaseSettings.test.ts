import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { processGone } from '../../src/app/leaseSettings.js';

/**
 * Issue 14: a restart after a crash need not wait for the dead process's leases to run out when
 * that process was on this machine and no longer exists; a holder that may be alive is never
 * taken for gone.
 */
describe('processGone', () => {
  it('says gone only for a process of this host that no longer exists', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const pid = child.pid!;
    const holder = (host: string, p: number) => `p0/projections/${host}:${p}/abcd1234`;
    expect(processGone(holder(hostname(), pid))).toBe(false);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(processGone(holder(hostname(), pid))).toBe(true);
    // Another machine's process, this very process, and a holder naming no process: never gone.
    expect(processGone(holder(`not-${hostname()}`, pid))).toBe(false);
    expect(processGone(holder(hostname(), process.pid))).toBe(false);
    expect(processGone('proc-a')).toBe(false);
  });
});
