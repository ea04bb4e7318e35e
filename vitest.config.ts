import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * What a test file may do only in a process of its own: replace a module (`vi.mock`), change the
 * environment, the clock or a shared object (`vi.stubEnv`, `process.env` assignments, fake timers,
 * `vi.spyOn`). Such a file would leave the change behind for the next file of a shared process.
 */
const NEEDS_OWN_PROCESS = /\bvi\.(mock|doMock|hoisted|stubEnv|stubGlobal|useFakeTimers|spyOn)\(|process\.env(\.\w+|\[[^\]]+\])\s*=[^=]|delete process\.env|Object\.assign\(process\.env/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return testFiles(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

const ownProcess = testFiles('test').filter((f) => NEEDS_OWN_PROCESS.test(readFileSync(f, 'utf8')));

/** Every process a test starts stops itself once its parent is gone (test/support/exitWithParent.mjs). */
const exitWithParent = `--import=${pathToFileURL(resolve('test/support/exitWithParent.mjs')).href}`;

export default defineConfig({
  test: {
    globalSetup: ['test/support/globalSetup.ts'],
    setupFiles: ['test/support/fileTeardown.ts'],
    env: { NODE_OPTIONS: [process.env.NODE_OPTIONS, exitWithParent].filter(Boolean).join(' ') },
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two files at a time on two cores: most files wait on child processes, disks and timers, so the
    // default (cores - 1, one file at a time here) leaves a core idle and the suite near CI's 15 minutes.
    maxWorkers: 2,
    projects: [
      // Most files share a process with the files run before them: the service's modules are loaded
      // once per process instead of once per file (about 1.6 s of CPU a file; docs/decisions.md,
      // "The test suite's processes"). Each file still starts its own services on its own directories.
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ownProcess, isolate: false } },
      { extends: true, test: { name: 'own-process', include: ownProcess } },
    ],
  },
});
