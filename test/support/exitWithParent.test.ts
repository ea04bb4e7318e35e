import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { until } from './until.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * The suite's own hygiene, not the service's: a process a test starts must not outlive the test
 * run (a killed run skips the hooks that would stop it). The intermediate process stands in for a
 * killed test worker: it starts a child that would otherwise run forever, prints its pid, and exits.
 */
describe('processes started by tests', () => {
  it('stop themselves once the process that started them is gone (NODE_OPTIONS from vitest.config.ts)', { timeout: 20_000 }, async () => {
    expect(process.env.NODE_OPTIONS ?? '').toContain('exitWithParent.mjs');
    const starter = `
      const { spawn } = require('node:child_process');
      const child = spawn(process.execPath, ['-e', 'process.stdout.write("up"); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
      // Exits only once the child runs (its preload has noted this process as its parent).
      child.stdout.once('data', () => {
        process.stdout.write(String(child.pid));
        process.exit(0);
      });
    `;
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn(process.execPath, ['-e', starter], { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      p.stdout.on('data', (b: Buffer) => (text += b.toString()));
      p.on('error', reject);
      p.on('exit', () => resolve(text));
    });
    const orphan = Number(out);
    expect(orphan).toBeGreaterThan(0);
    try {
      await until('the orphaned child to stop', Date.now() + 15_000, async () => !alive(orphan));
    } finally {
      if (alive(orphan)) process.kill(orphan, 'SIGKILL');
    }
  });
});
