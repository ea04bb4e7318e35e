/**
 * For test/shared/workerThreads.test.ts, run as `node --max-semi-space-size=1 --import tsx` (the
 * flag as npm start passes it, smaller): as the main thread, starts itself as a worker thread
 * through startWorker with a 48 MiB young generation and prints the largest new space the thread
 * reached, in MiB; as the worker, allocates objects of which a third survive a while (so that V8
 * grows the semi-spaces as far as it may) and reports its new space.
 */
import v8 from 'node:v8';
import { isMainThread, parentPort } from 'node:worker_threads';
import { startWorker } from '../../src/shared/workerThreads.js';

const newSpaceMiB = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size / 1048576;

if (isMainThread) {
  const worker = startWorker(new URL(import.meta.url), { loadsTypeScript: true, resourceLimits: { maxYoungGenerationSizeMb: 48 } });
  worker.once('message', (m: number) => {
    process.stdout.write(`${JSON.stringify({ worker: m, main: newSpaceMiB() })}\n`);
    void worker.terminate();
  });
} else {
  let kept: object[] = [];
  let most = 0;
  for (let i = 0; i < 3_000_000; i++) {
    const o = { i, s: `x${i}` };
    if (i % 3 === 0) kept.push(o);
    if (kept.length > 200_000) kept = [];
    if (i % 100_000 === 0) most = Math.max(most, newSpaceMiB());
  }
  parentPort!.postMessage(Math.max(most, newSpaceMiB()));
}
