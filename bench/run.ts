/**
 * Benchmark dispatcher: `npm run bench -- <name> [args...]` runs the default export of
 * bench/<name>.ts with the remaining arguments. An unknown or missing name lists the benchmarks.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && f !== 'run.ts')
  .map((f) => f.slice(0, -'.ts'.length))
  .sort();

const [name, ...args] = process.argv.slice(2);
if (!name || !available.includes(name)) {
  if (name) console.error(`unknown benchmark: ${name}`);
  console.error(`usage: npm run bench -- <name> [args...]\navailable benchmarks: ${available.join(', ') || '(none)'}`);
  process.exit(1);
}

const mod = (await import(pathToFileURL(join(here, `${name}.ts`)).href)) as { default?: (args: string[]) => unknown };
if (typeof mod.default !== 'function') {
  console.error(`bench/${name}.ts has no default export to run`);
  process.exit(1);
}
await mod.default(args);
