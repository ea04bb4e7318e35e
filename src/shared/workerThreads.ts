import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Young generation of the service's long-lived worker threads (projector, ETL), in MiB. By
 * default V8 grows each isolate's semi-spaces to 16 MiB when it allocates as fast as these
 * threads do, and keeps them committed; capped here, each worker's committed heap of a 50 MiB
 * import fell from 81-90 to 65 MB, for about twice as many collections (BENCHMARKS.md, issue 21).
 */
export const THREAD_YOUNG_GENERATION_MB = 16;

/** The module `name` beside the caller's module (`import.meta.url`): `.ts` from source, `.js` in a build. */
export function siblingModule(callerUrl: string, name: string): URL {
  return new URL(`./${name}${extname(fileURLToPath(callerUrl))}`, callerUrl);
}

/**
 * The file a worker thread starts on to run `entry`: the entry itself in a build; from source,
 * `tsxThreadEntry.mjs`, which registers tsx in the thread before loading the entry named in
 * `workerData.entry` (pass both on).
 */
export function threadEntry(entry: URL): { filename: string; entry: string } {
  const filename = entry.pathname.endsWith('.ts') ? new URL('./tsxThreadEntry.mjs', import.meta.url).href : entry.href;
  return { filename, entry: entry.href };
}

/** Starts a worker thread on a module of this project, from source or from a build. */
export function startWorker(entry: URL, options: WorkerOptions & { workerData?: Record<string, unknown> } = {}): Worker {
  const t = threadEntry(entry);
  return new Worker(new URL(t.filename), { ...options, workerData: { ...options.workerData, entry: t.entry } });
}
