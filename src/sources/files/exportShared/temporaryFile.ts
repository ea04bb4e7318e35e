import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ErasureHook } from '../../../../commands/deletions/erasureSteps.js';
import type { ParseContext } from '../../../../commands/ingestion/records.js';

/**
 * A plaintext copy of an upload's entry on local disk, for what cannot be read as a stream (Health
 * Connect's SQLite database, a gzip-compressed Apple export.zip). The file holds health data in
 * the clear: it is created readable by the service alone, in a directory the caller names (under
 * DATA_DIR), and removed in a `finally` by its user. A crash, an out-of-memory or a killed worker
 * between the two leaves it behind (issue 34 §7), so every copy is named by this module alone:
 * `import-<owner>-<random>`, where the owner is an opaque token of the user and provider whose
 * upload it copies. The service removes every `import-*` in the directory at start-up, before any
 * import runs (removeStaleTemporaryFiles), and a user's or provider's erasure removes that
 * owner's copies (temporaryFilesErasureHook) wherever a crash left them, in any process sharing
 * DATA_DIR (docs/formats/uploads.md "Bounds on hostile files").
 */

const PREFIX = 'import-';
/** What the Apple decoder named its gzip spill before every copy was named here: swept the same way. */
const LEGACY_PREFIX = 'apple-health-';

/** Whose upload a copy holds; null when the decoder runs outside the pipeline (CLI, tests). */
export type SpillOwner = { userId: string; provider: string } | null;

export function spillOwnerOf(ctx: ParseContext): SpillOwner {
  return ctx.userId ? { userId: ctx.userId, provider: ctx.provider } : null;
}

/** An opaque token: the name tells who owns a copy to the service, not a user id to a reader of the directory. */
const token = (kind: string, value: string) => createHash('sha256').update(`${kind}\0${value}`).digest('hex').slice(0, 24);
const userPrefix = (userId: string) => `${PREFIX}u${token('user', userId)}.`;
const ownerPrefix = (owner: NonNullable<SpillOwner>) => `${userPrefix(owner.userId)}p${token('provider', owner.provider)}-`;

/** A new copy's path in `dir`. */
export function temporaryFilePath(dir: string, owner: SpillOwner, suffix: string): string {
  return join(dir, `${owner ? ownerPrefix(owner) : `${PREFIX}unowned-`}${randomUUID()}${suffix}`);
}

export class TooLargeError extends Error {}

/** Writes the stream to a new file in `dir`; at most `maxBytes`, else TooLargeError and no file. */
export async function spillToTemporaryFile(input: Readable, dir: string, suffix: string, maxBytes: number, owner: SpillOwner = null): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = temporaryFilePath(dir, owner, suffix);
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

/** Removes the entries of `dir` whose names pass `matches` (a legacy spill is a directory); answers how many. */
async function removeMatching(dir: string, matches: (name: string) => boolean): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  const gone = names.filter(matches);
  await Promise.all(gone.map((n) => rm(join(dir, n), { force: true, recursive: true })));
  return gone.length;
}

/** Removes every temporary file an earlier run left in `dir` (a crash mid-import); answers how many. */
export function removeStaleTemporaryFiles(dir: string): Promise<number> {
  return removeMatching(dir, (n) => n.startsWith(PREFIX) || n.startsWith(LEGACY_PREFIX));
}

/**
 * Removes the copies of a user's uploads (of one provider, or all); answers how many. A copy an
 * import is still reading goes too: the reader keeps its open file until it ends, and the
 * erasure stops that import before its next write.
 */
export function removeOwnedTemporaryFiles(dir: string, userId: string, provider?: string): Promise<number> {
  const prefix = provider === undefined ? userPrefix(userId) : ownerPrefix({ userId, provider });
  return removeMatching(dir, (n) => n.startsWith(prefix));
}

/** The erasure step for the copies in `dir` (the service's DATA_DIR/import-tmp). */
export function temporaryFilesErasureHook(dir: string): ErasureHook {
  return {
    name: 'import temporary files',
    async eraseUser({ userId }) {
      await removeOwnedTemporaryFiles(dir, userId);
    },
    async eraseProvider({ userId, provider }) {
      await removeOwnedTemporaryFiles(dir, userId, provider);
    },
  };
}
