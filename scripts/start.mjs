/**
 * `npm start`: compiles the sources that changed since the last start (scripts/buildService.mjs),
 * then runs the service's compiled entry in this same process, so that the process `npm start`
 * leaves running is the service itself (signals, resident memory, `/proc` all name it) and
 * its worker threads load compiled entries too (src/shared/workerThreads.ts).
 */
import { runCompiled } from './buildService.mjs';

await runCompiled('src/main.js');
