/**
 * The service's JavaScript, compiled beside the sources into `dist/` (the layout `npm run build`
 * writes), for `npm start` to run without tsx: tsx's loader costs every JavaScript thread of the
 * service an isolate of its own (about 170 MiB of resident memory during a 1M-sample ingest, 97
 * idle; BENCHMARKS.md, "Resident memory of the service"). Only sources newer than their output are
 * compiled again, file by file and without type checking, as tsx itself does (`npm run typecheck`
 * checks types), so a start after an edit costs about a second. Plain JavaScript: it runs before
 * any build.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The folders the service is made of (tsconfig.build.json's `include`). */
const SOURCE_DIRS = ['src', 'commands', 'projections', 'queries'];

function* typescriptFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* typescriptFiles(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

const mtimeOf = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
};

/** Where a package's compiled files go (`dist/`, beside `dist/console`). */
export const outDirOf = (root) => join(root, 'dist');
const outputOf = (root, source) => join(outDirOf(root), relative(root, source)).replace(/\.ts$/, '.js');

/**
 * The compiled file of one of the service's sources (a path), or null for a file the build does not
 * hold (outside SOURCE_DIRS, e.g. a test's own module).
 */
export function compiledFileOf(source, root = ROOT) {
  const rel = relative(root, source);
  if (!rel.endsWith('.ts') || rel.endsWith('.d.ts') || !SOURCE_DIRS.some((d) => rel.startsWith(`${d}/`))) return null;
  return outputOf(root, source);
}

/** The sources of the package at `root` whose compiled file is missing or older than they are. */
export function staleSources(root = ROOT) {
  const stale = [];
  for (const dir of SOURCE_DIRS.filter((d) => existsSync(join(root, d)))) {
    for (const source of typescriptFiles(join(root, dir))) if (mtimeOf(outputOf(root, source)) < mtimeOf(source)) stale.push(source);
  }
  return stale;
}

/**
 * Compiles the stale sources, each written to a temporary file and renamed over its output, so
 * that two starts at once (or a start beside a running service) never load a half-written module.
 * Returns how many files were compiled.
 */
export async function buildStaleSources(root = ROOT) {
  const stale = staleSources(root);
  if (stale.length === 0) return 0;
  const { buildSync } = await import('esbuild');
  const result = buildSync({
    entryPoints: stale,
    outbase: root,
    outdir: outDirOf(root),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // The project's compiler settings (module kind, target), the same file for every package root.
    tsconfig: join(ROOT, 'tsconfig.json'),
    write: false,
    logLevel: 'warning',
  });
  for (const file of result.outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
  return result.outputFiles.length;
}

/**
 * Compiles the stale sources, then runs one compiled entry (`src/main.js`, `src/cli/main.js`) in
 * this same process: what `npm start` and `npm run cli` run, so neither pays tsx's start-up
 * (4-5 s a command for the CLI, issue 36 point 6) and the process is the program itself.
 */
export async function runCompiled(entry, root = ROOT) {
  await buildStaleSources(root);
  await import(pathToFileURL(join(outDirOf(root), entry)).href);
}
