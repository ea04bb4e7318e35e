import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Young generation of the service's long-lived worker threads (projector, ETL, stores), in MiB:
 * two 4 MiB semi-spaces and V8's new large-object space of the same size. By default V8 grows each
 * isolate's semi-spaces to 16 MiB when it allocates as fast as these threads do, and keeps them
 * committed; capped at 16 MiB (5.3 MiB semi-spaces), each worker's committed heap of a 50 MiB import
 * fell from 81-90 to 65 MB, for about twice as many collections (BENCHMARKS.md, issue 21). Under
 * `npm start` the threads ran with 4 MiB semi-spaces all the same until issue 38's GC round (the
 * main thread's `--max-semi-space-size=4` won over this; leaveYoungGenerationToThreadLimits): given
 * their 5.3 MiB back, the ETL threads scavenged half as often for no less CPU of theirs or V8's
 * and ~6 MB more committed each (single 300k ingests), so 12 keeps what production ran with, now
 * in tests too.
 */
export const THREAD_YOUNG_GENERATION_MB = 12;

/** The module `name` beside the caller's module (`import.meta.url`): `.ts` from source, `.js` in a build. */
export function siblingModule(callerUrl: string, name: string): URL {
  return new URL(`./${name}${extname(fileURLToPath(callerUrl))}`, callerUrl);
}

/**
 * The file a worker thread starts on to run `entry`: the entry itself in a build; from source,
 * `sourceThreadEntry.mjs`, which loads the compiled file of the entry named in `workerData.entry`
 * after compiling what changed (pass both on).
 */
export function threadEntry(entry: URL): { filename: string; entry: string } {
  const filename = entry.pathname.endsWith('.ts') ? new URL('./sourceThreadEntry.mjs', import.meta.url).href : entry.href;
  return { filename, entry: entry.href };
}

/**
 * Set by the first thread from sources once the build is current, so that this process's later
 * threads skip the look at every source's time (~50 ms): they run the code as of that build, as
 * this process's main thread runs the modules it loaded then.
 */
const sourceBuildDone = new Int32Array(new SharedArrayBuffer(4));

/**
 * Lets each worker thread's `resourceLimits.maxYoungGenerationSizeMb` decide its young generation.
 * `node --max-semi-space-size` (npm start's and the Docker image's, meant for the main thread) is a
 * process-wide V8 flag, and V8 lets it win over an isolate's own limit: every thread started under
 * it got the main thread's 4 MiB semi-spaces, whatever its `resourceLimits` asked (tests run node
 * without the flag, so there the limits held). V8 reads the flag when it creates an isolate's heap:
 * once the main thread runs, clearing it changes nothing there and leaves the threads started
 * after to their limits (docs/memory.md, "The threads' heaps").
 */
function leaveYoungGenerationToThreadLimits(): void {
  v8.setFlagsFromString('--max-semi-space-size=0');
}

/**
 * Starts a worker thread on a module of this project, from source or from a build. `loadsTypeScript`
 * (tests only): the thread will import a TypeScript module of its own (a test's stand-in), so from
 * sources it runs wholly through tsx rather than on the compiled entry.
 */
export function startWorker(entry: URL, options: WorkerOptions & { workerData?: Record<string, unknown>; loadsTypeScript?: boolean } = {}): Worker {
  leaveYoungGenerationToThreadLimits();
  const { loadsTypeScript, ...workerOptions } = options;
  const t = threadEntry(entry);
  const fromSources = t.filename !== t.entry ? { sourceBuildDone, loadsTypeScript: loadsTypeScript === true } : {};
  return new Worker(new URL(t.filename), { ...workerOptions, workerData: { ...workerOptions.workerData, entry: t.entry, ...fromSources } });
}
