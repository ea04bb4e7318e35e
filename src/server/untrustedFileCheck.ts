import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { siblingModule } from '../shared/workerThreads.js';
import { problems } from './problems.js';

/**
 * The request-time check of a stranger's SQLite file (contracts §12, §18; issue 34 §1), run where
 * it can be stopped: one child process per check (untrustedFileCheckProcess.ts), killed when it
 * outlives the deadline. better-sqlite3 cannot interrupt a statement, and neither can a worker
 * thread's termination (it waits for the native call to return); a file's schema can make a 100 KB
 * file cost minutes of `quick_check`. The schema check (exportShared/untrustedSchema.ts) refuses
 * every such schema known; the deadline holds for whatever is not known.
 *
 * - A check past its deadline is answered 422 ("could not be checked within N s"), the upload
 *   refused and nothing stored: the cost is the file's, so it is refused like any file that cannot
 *   be read (a Health Connect zip can still come by resumable upload, checked by its ETL job).
 * - At most `maxRunning` checks run at once (each may hold a core for the whole deadline), and at
 *   most `maxWaiting` wait for one; a check beyond both is answered 429 with Retry-After, so a
 *   burst of uploads costs a bounded number of processes and a bounded wait.
 * - The Health Connect database is copied out of its zip into a private directory (0700) under the
 *   system's temporary directory, which this module removes once the process ended, however it
 *   ended (a killed process runs no `finally`). What a crash of the service within a check leaves
 *   behind is removed by the next check of the process that starts after it
 *   (`removeStaleCheckCopies`): a plaintext copy of someone's health data never stays.
 * - A process start (Node, then the modules it reads) costs a fraction of a second of the
 *   deadline: far less than a check of a file near 50 MiB, and paid only by SQLite uploads.
 */

const MiB = 1024 * 1024;

export type UntrustedFileKind = 'device-c' | 'health-connect';

/** What the checker's process is sent: the body is a copy, the caller keeps its own. */
export type CheckTask = { kind: UntrustedFileKind; body: Uint8Array; tempDir: string; maxDatabaseBytes: number; maxSqliteHeapBytes: number };
/** `refusal`: why the file is refused, null when it passed; `failure`: the check itself failed (a bug, a full disk). */
export type CheckAnswer = { refusal: string | null } | { failure: string };

export type UntrustedFileCheckOptions = {
  deadlineMs: number;
  maxRunning: number;
  maxWaiting: number;
  maxDatabaseBytes: number;
  maxSqliteHeapBytes: number;
  /** The checker's module (untrustedFileCheckProcess); a test gives one that never answers. */
  entry: URL;
};

/**
 * Defaults: 10 s is far above a 50 MiB body's check (process start included); 2 matches the cores
 * the service is sized for; a Health Connect database inflating past contracts §3's 512 MiB is not
 * copied at the request (the resumable upload takes any size).
 */
export const UNTRUSTED_FILE_CHECK_DEFAULTS: UntrustedFileCheckOptions = {
  deadlineMs: 10_000,
  maxRunning: 2,
  maxWaiting: 8,
  maxDatabaseBytes: 512 * MiB,
  maxSqliteHeapBytes: 256 * MiB,
  entry: siblingModule(import.meta.url, 'untrustedFileCheckProcess'),
};

const RETRY_AFTER_S = 5;
const CHECK_COPY_PREFIX = 'wellstream-check-';
/**
 * A check's copy older than this was left by a service that stopped within the check: a live
 * check ends at its deadline (seconds), so no running check's copy is this old, whichever process
 * on the machine runs it.
 */
export const STALE_CHECK_COPY_MS = 10 * 60_000;

/** Removes the checks' copies under `root` last changed more than STALE_CHECK_COPY_MS before `now`; answers how many. */
export async function removeStaleCheckCopies(root: string, now = Date.now()): Promise<number> {
  let removed = 0;
  const names = await readdir(root).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(CHECK_COPY_PREFIX)) continue;
    const path = join(root, name);
    const changed = (await stat(path).catch(() => null))?.mtimeMs;
    if (changed === undefined || now - changed <= STALE_CHECK_COPY_MS) continue;
    await rm(path, { recursive: true, force: true });
    removed++;
  }
  return removed;
}

export class UntrustedFileChecks {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Stale copies are looked for once per process, before its first copy. */
  private staleSwept: Promise<unknown> | null = null;

  constructor(private readonly options: UntrustedFileCheckOptions) {}

  /** Null when the file passed; else the reason it is refused. Throws 429 when too many checks are under way, 422 past the deadline. */
  async check(kind: UntrustedFileKind, body: Buffer): Promise<string | null> {
    await this.slot();
    try {
      return await this.runChecker(kind, body);
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private async slot(): Promise<void> {
    if (this.running < this.options.maxRunning) {
      this.running++;
      return;
    }
    if (this.waiting.length >= this.options.maxWaiting) {
      throw problems.tooManyRequests(`too many uploaded databases are being checked at once (${this.options.maxRunning} running, ${this.options.maxWaiting} waiting); retry later`, RETRY_AFTER_S);
    }
    // The slot is handed over by the check that ends: `running` stays counted.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private async runChecker(kind: UntrustedFileKind, body: Buffer): Promise<string | null> {
    if (kind === 'health-connect') await (this.staleSwept ??= removeStaleCheckCopies(tmpdir()).catch(() => 0));
    const tempDir = kind === 'health-connect' ? await mkdtemp(join(tmpdir(), CHECK_COPY_PREFIX)) : '';
    const task: CheckTask = { kind, body, tempDir, maxDatabaseBytes: this.options.maxDatabaseBytes, maxSqliteHeapBytes: this.options.maxSqliteHeapBytes };
    const child = startChecker(this.options.entry);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = await new Promise<CheckAnswer | 'deadline'>((resolve) => {
        timer = setTimeout(() => resolve('deadline'), this.options.deadlineMs);
        child.once('message', (m) => resolve(m as CheckAnswer));
        child.on('error', (err) => resolve({ failure: err.message }));
        child.once('exit', (code, signal) => resolve({ failure: `the check's process exited (${signal ?? code}) before it answered` }));
        child.send(task, (err) => err && resolve({ failure: err.message }));
      });
      if (answer === 'deadline') {
        throw problems.unprocessable(`the uploaded database could not be checked within ${this.options.deadlineMs / 1000} s, and is refused unread`);
      }
      if ('failure' in answer) throw new Error(`checking an uploaded ${kind} database failed: ${answer.failure}`);
      return answer.refusal;
    } finally {
      clearTimeout(timer);
      // Answered or not, the process goes: SIGKILL stops SQLite mid-statement, which nothing else can.
      child.kill('SIGKILL');
      await exited;
      if (tempDir) await rm(tempDir, { recursive: true, force: true });
    }
  }
}

/**
 * The checker's process, from a build (`.js`) or from source (`.ts`, with tsx's loader, which a
 * forked process takes from --import). execArgv is given, so the service's own flags (heap sizes,
 * vitest's loaders) are not passed on; stdout and stderr are dropped (a SQLite message could
 * quote the file).
 */
function startChecker(entry: URL): ChildProcess {
  const fromSource = entry.pathname.endsWith('.ts');
  const execArgv = fromSource ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : [];
  return fork(fileURLToPath(entry), [], { execArgv, serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
}

/** The service's one set of checks: the upload formats are module constants, and so is this bound. */
export const untrustedFileChecks = new UntrustedFileChecks(UNTRUSTED_FILE_CHECK_DEFAULTS);
