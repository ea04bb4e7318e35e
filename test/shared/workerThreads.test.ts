import { describe, expect, it } from 'vitest';
import { siblingModule, threadEntry } from '../../src/shared/workerThreads.js';

/**
 * Issue 27 (resident memory): the compiled service (`npm start`) starts its worker threads on
 * compiled entries directly; only a thread started from sources (vitest, the CLI through tsx)
 * goes through tsxThreadEntry.mjs, which registers tsx in the thread (an isolate of its own).
 */
describe('worker thread entries, from sources and compiled (issue 27)', () => {
  it('a compiled module starts its sibling thread entry as .js, with no tsx loader in between', () => {
    const entry = siblingModule('file:///srv/wellstream/dist/src/processes/etl/etlPool.js', 'etlThread');
    expect(entry.href).toBe('file:///srv/wellstream/dist/src/processes/etl/etlThread.js');
    expect(threadEntry(entry)).toEqual({ filename: entry.href, entry: entry.href });
  });

  it('a source module starts its sibling through tsxThreadEntry.mjs, which loads the .ts entry', () => {
    const entry = siblingModule('file:///srv/wellstream/src/projector/threadedRunner.ts', 'projectorThread');
    expect(entry.href).toBe('file:///srv/wellstream/src/projector/projectorThread.ts');
    const t = threadEntry(entry);
    expect(t.entry).toBe(entry.href);
    expect(t.filename).toMatch(/\/src\/shared\/tsxThreadEntry\.mjs$/);
  });
});
