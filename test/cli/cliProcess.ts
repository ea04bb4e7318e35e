import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export type CliRun = { code: number; stdout: string; stderr: string; lines: string[] };

/**
 * Runs `npm run cli -- <args>` the way npm does (tsx on src/cli/main.ts) as a child process on
 * the embedded backend in `dataDir`: whatever EVENTSTORE_URL/MONGODB_URL the test runner has
 * set must not point the CLI elsewhere.
 */
export function runCli(dataDir: string, ...args: string[]): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
  for (const k of ['EVENTSTORE_URL', 'MONGODB_URL', 'ADMIN_API_KEY', 'SEALING_KEY', 'LOG_LEVEL']) delete env[k];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: root, env, timeout: 20_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr, lines: stdout.split('\n').filter((l) => l.length > 0) });
    });
  });
}

export function jsonLines(run: CliRun): Record<string, unknown>[] {
  return run.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}
