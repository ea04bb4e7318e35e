/**
 * What a worker thread loads when the service runs from TypeScript (vitest, the CLI through tsx;
 * `npm start` runs compiled JavaScript and does not need it): a new thread inherits neither tsx's
 * loader nor vitest's transforms, and on Node 20 an
 * `--import tsx` in the thread's execArgv does not reach the modules it loads. So this plain
 * module registers tsx in the thread, then loads the TypeScript entry named in
 * `workerData.entry`, and passes on its default export, if any. A build (`dist`) loads
 * its `.js` entries directly (`threadEntry` in workerThreads.ts).
 */
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const entry = await import(workerData.entry);

export default entry.default;
