import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compiledFileOf } from '../../scripts/buildService.mjs';
import { siblingModule, threadEntry } from '../../src/shared/workerThreads.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Issue 27 (resident memory): the compiled service (`npm start`) starts its worker threads on
 * compiled entries directly. A thread started from sources (vitest, the CLI or a script through
 * tsx) goes through sourceThreadEntry.mjs, which loads the same compiled entry after compiling what
 * changed, so no thread carries a TypeScript loader of its own (docs/decisions.md, "Worker threads
 * from sources").
 */
describe('worker thread entries, from sources and compiled (issue 27)', () => {
  it('a compiled module starts its sibling thread entry as .js, with no loader in between', () => {
    const entry = siblingModule('file:///srv/wellstream/dist/src/processes/etl/etlPool.js', 'etlThread');
    expect(entry.href).toBe('file:///srv/wellstream/dist/src/processes/etl/etlThread.js');
    expect(threadEntry(entry)).toEqual({ filename: entry.href, entry: entry.href });
  });

  it('a source module starts its sibling through sourceThreadEntry.mjs, which is told the .ts entry', () => {
    const entry = siblingModule('file:///srv/wellstream/src/projector/threadedRunner.ts', 'projectorThread');
    expect(entry.href).toBe('file:///srv/wellstream/src/projector/projectorThread.ts');
    const t = threadEntry(entry);
    expect(t.entry).toBe(entry.href);
    expect(t.filename).toMatch(/\/src\/shared\/sourceThreadEntry\.mjs$/);
  });

  it('a service source maps to its file in the build; a test module or a declaration file has none (it stays on tsx)', () => {
    expect(compiledFileOf(join(root, 'src/projector/projectorThread.ts'))).toBe(join(root, 'dist/src/projector/projectorThread.js'));
    expect(compiledFileOf(join(root, 'commands/ingestion/upload.ts'))).toBe(join(root, 'dist/commands/ingestion/upload.js'));
    expect(compiledFileOf(join(root, 'test/processes/etl/hostileParsers.ts'))).toBeNull();
    expect(compiledFileOf(join(root, 'src/types/shims.d.ts'))).toBeNull();
    expect(compiledFileOf(join(root, 'srcs/elsewhere.ts'))).toBeNull();
  });
});

/**
 * Issue 38 (V8's GC threads): npm start runs node with `--max-semi-space-size=4` for the main
 * thread, a process-wide flag that V8 applies over a worker's own `resourceLimits`. startWorker
 * clears it (the main thread's heap is configured by then), so each thread's young generation is
 * the one its limits ask for, under npm start as in the tests (docs/memory.md, "The threads' heaps").
 */
describe("worker threads' young generations (issue 38)", () => {
  it("a thread started under node's --max-semi-space-size gets the young generation its resourceLimits ask for", () => {
    const run = spawnSync(process.execPath, ['--max-semi-space-size=1', '--import', 'tsx', fileURLToPath(new URL('./youngGenerationFixture.ts', import.meta.url))], { cwd: root, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const sizes = JSON.parse(run.stdout) as { worker: number; main: number };
    // Under the flag a new space holds two 1 MiB semi-spaces; the thread's 48 MiB young generation allows two of 16.
    expect(sizes.main).toBeLessThanOrEqual(2);
    expect(sizes.worker).toBeGreaterThan(2);
  });
});
