import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The directories made by the test file running now (a process runs several files in turn: vitest.config.ts). */
const made = new Set<string>();
let exitHook = false;

/** A fresh directory, removed after the test file that made it (test/support/fileTeardown.ts) or when the process exits. */
export function tempDir(prefix = 'wellstream-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', removeTempDirs);
  }
  return dir;
}

/** Removes every directory tempDir made so far. */
export function removeTempDirs(): void {
  // Retried: a service thread still winding down after its close resolved (a SQLite WAL or journal
  // file created and removed as a connection ends) can make one pass meet a file it did not list
  // (ENOTEMPTY, seen once in a clean-clone run of test/server/admin.test.ts).
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    } catch (e) {
      // What was still there names the writer that outlived its close.
      let left: string[] = [];
      try {
        left = readdirSync(dir, { recursive: true }) as string[];
      } catch {
        // gone meanwhile
      }
      console.error(`could not remove ${dir}; it still holds ${JSON.stringify(left)}`);
      throw e;
    }
  }
  made.clear();
}
