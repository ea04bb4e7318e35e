import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

const require = createRequire(import.meta.url);

/**
 * Starts a worker thread on a module of this project. The service runs its TypeScript through
 * tsx (`npm start`), and tests through vitest, whose transforms a new thread does not inherit.
 * Node 20 does not apply `--import` loaders to a worker's entry module, so a `.ts` entry is
 * reached through a small bootstrap that registers tsx's loader in the thread first, then
 * imports the entry.
 */
export function startWorker(entry: URL, options: WorkerOptions = {}): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, options);
  const api = tsxEsmApi();
  const bootstrap = `import(${JSON.stringify(api)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** The ESM build of tsx's API, as its package exports it (`require.resolve` would give the CommonJS one). */
function tsxEsmApi(): string {
  const pkgPath = require.resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  return pathToFileURL(join(dirname(pkgPath), pkg.exports['./esm/api']!.import.default)).href;
}
