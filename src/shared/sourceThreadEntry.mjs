/**
 * What a worker thread loads when the service runs from TypeScript (vitest, the CLI or a script
 * through tsx; `npm start` runs compiled JavaScript and starts its threads on their compiled entries
 * directly). A new thread inherits neither tsx's loader nor vitest's transforms, so a `.ts` entry
 * cannot be imported as it is. This plain module compiles the sources that changed (the same
 * incremental build `npm start` runs, scripts/buildService.mjs) and loads the entry's compiled file,
 * so the thread runs what a started service runs, without a TypeScript loader of its own: tsx
 * registered in every thread cost each of them an isolate's worth of compiler and ~0.9 s of CPU per
 * service start (docs/decisions.md, "Worker threads from sources"). An entry the build does not hold
 * (a test's own module), or a thread that will import one (`loadsTypeScript`), still goes through
 * tsx. Passes on the entry's default export, if any.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { workerData } from 'node:worker_threads';
import { buildStaleSources, compiledFileOf } from '../../scripts/buildService.mjs';

const compiled = workerData.loadsTypeScript ? null : compiledFileOf(fileURLToPath(workerData.entry));
let entry;
if (compiled) {
  // Once per process (workerThreads.ts, `sourceBuildDone`); two threads starting together may both build: the
  // build replaces each file whole, with the same bytes.
  if (Atomics.load(workerData.sourceBuildDone, 0) === 0) {
    await buildStaleSources();
    Atomics.store(workerData.sourceBuildDone, 0, 1);
  }
  entry = await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  entry = await import(workerData.entry);
}

export default entry.default;
