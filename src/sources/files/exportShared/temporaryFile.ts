import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * A plaintext copy of an upload's entry on local disk, for the one format that cannot be read as
 * a stream (Health Connect's SQLite database). The file holds health data in the clear: it is
 * created readable by the service alone, in a directory the caller names (under DATA_DIR), and
 * removed in a `finally` by its user. A crash between the two leaves it behind: the service calls
 * removeStaleTemporaryFiles on that directory at start-up, before any import runs, so no copy
 * outlives a restart (docs/formats/health-connect.md "Erasure").
 */

const PREFIX = 'import-';

export class TooLargeError extends Error {}

/** Writes the stream to a new file in `dir`; at most `maxBytes`, else TooLargeError and no file. */
export async function spillToTemporaryFile(input: Readable, dir: string, suffix: string, maxBytes: number): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${PREFIX}${randomUUID()}${suffix}`);
  let written = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _enc, done) {
      written += chunk.length;
      if (written > maxBytes) return done(new TooLargeError(`more than ${maxBytes} bytes`));
      done(null, chunk);
    },
  });
  try {
    await pipeline(input, limit, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
    return path;
  } catch (err) {
    await removeTemporaryFile(path);
    throw err;
  }
}

/** Removes a temporary file and the journal files SQLite may have made beside it. */
export async function removeTemporaryFile(path: string): Promise<void> {
  await Promise.all(['', '-journal', '-wal', '-shm'].map((s) => rm(`${path}${s}`, { force: true })));
}

/** Removes every temporary file an earlier run left in `dir` (a crash mid-import); answers how many. */
export async function removeStaleTemporaryFiles(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  const stale = names.filter((n) => n.startsWith(PREFIX));
  await Promise.all(stale.map((n) => rm(join(dir, n), { force: true })));
  return stale.length;
}
