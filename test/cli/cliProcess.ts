import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** By path, so the CLI also starts from a working directory outside the package. */
const cli = join(root, 'scripts/cli.mjs');

export type CliRun = { code: number; stdout: string; stderr: string; lines: string[] };

/** Settings of the test runner that must not point the CLI at other stores. */
const FOREIGN = ['DATA_DIR', 'EVENTSTORE_URL', 'MONGODB_URL', 'ADMIN_API_KEY', 'SEALING_KEY', 'LOG_LEVEL'];

/**
 * Runs the CLI as `npm run cli` does (scripts/cli.mjs: compiles what changed, then runs the compiled
 * src/cli/main.ts) as a child process in `cwd` with the test runner's environment less FOREIGN, plus
 * `env`: as a user's shell would run it.
 */
export function runCliIn(cwd: string, env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of FOREIGN) delete base[k];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [cli, ...args], { cwd, env: { ...base, ...env }, timeout: 20_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr, lines: stdout.split('\n').filter((l) => l.length > 0) });
    });
  });
}

/** `npm run cli -- <args>` on the embedded backend in `dataDir` (DATA_DIR), from the package directory. */
export function runCli(dataDir: string, ...args: string[]): Promise<CliRun> {
  return runCliIn(root, { DATA_DIR: dataDir }, ...args);
}

export function jsonLines(run: CliRun): Record<string, unknown>[] {
  return run.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}
