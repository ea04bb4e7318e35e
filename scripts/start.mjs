/**
 * `npm start`: compiles the sources that changed since the last start (scripts/buildService.mjs),
 * then runs the service's compiled entry in this same process, so that the process `npm start`
 * leaves running is the service itself (signals, resident memory, `/proc` all name it) and
 * its worker threads load compiled entries too (src/shared/workerThreads.ts).
 */
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { ROOT, buildStaleSources, outDirOf } from './buildService.mjs';

await buildStaleSources();
await import(pathToFileURL(join(outDirOf(ROOT), 'src', 'main.js')).href);
