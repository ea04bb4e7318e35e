/**
 * Whether an error says the store or the network failed for a while (contracts §19) rather than
 * that the work itself cannot be done. Projections, reactors and work-queue jobs retry such an
 * error with back-off for as long as it takes and never count it against the event or job: a
 * busy, full or failing-over store must never turn a correct event into a dead letter.
 *
 * Read by name, code and labels, never by `instanceof`: this layer imports no driver, and a
 * second copy of a driver would break `instanceof` anyway (docs/decisions.md "Transient errors").
 */

/** What kind of trouble a transient error is, for `projections status` and the logs. */
export type TransientKind = 'busy' | 'full' | 'io' | 'network' | 'failover';

/** SQLite's primary result codes (better-sqlite3 puts the extended code, e.g. SQLITE_BUSY_SNAPSHOT, in `code`). */
const SQLITE: readonly [string, TransientKind][] = [
  ['SQLITE_BUSY', 'busy'],
  ['SQLITE_LOCKED', 'busy'],
  ['SQLITE_PROTOCOL', 'busy'],
  ['SQLITE_FULL', 'full'],
  ['SQLITE_IOERR', 'io'],
  ['SQLITE_CANTOPEN', 'io'],
];

/** Node's system errors (errno codes). */
const SYSTEM: Readonly<Record<string, TransientKind>> = {
  ENOSPC: 'full',
  EDQUOT: 'full',
  EIO: 'io',
  EAGAIN: 'busy',
  EBUSY: 'busy',
  EMFILE: 'busy',
  ENFILE: 'busy',
  ECONNRESET: 'network',
  ECONNREFUSED: 'network',
  ECONNABORTED: 'network',
  ETIMEDOUT: 'network',
  EPIPE: 'network',
  EHOSTUNREACH: 'network',
  ENETUNREACH: 'network',
  ENETDOWN: 'network',
  EAI_AGAIN: 'network',
};

/** MongoDB's error labels that the driver's own retry logic acts on. */
const MONGO_LABELS = ['RetryableWriteError', 'TransientTransactionError', 'ResetPool', 'NetworkError'];
/** MongoDB error classes whose whole meaning is "the server or the path to it is not there now". */
const MONGO_NAMES: Readonly<Record<string, TransientKind>> = {
  MongoNetworkError: 'network',
  MongoNetworkTimeoutError: 'network',
  MongoServerSelectionError: 'failover',
  MongoTopologyClosedError: 'network',
  MongoPoolClearedError: 'network',
  MongoWriteConcernError: 'failover',
};
/**
 * Server codes of an election or a node going down (NotWritablePrimary, NotPrimaryNoSecondaryOk,
 * NotPrimaryOrSecondary, PrimarySteppedDown, InterruptedAtShutdown, InterruptedDueToReplStateChange,
 * ShutdownInProgress, HostUnreachable, HostNotFound, NetworkTimeout, SocketException, ExceededTimeLimit).
 */
const MONGO_FAILOVER_CODES = new Set([10107, 13435, 13436, 189, 11600, 11602, 91, 6, 7, 89, 9001, 262]);
/** MongoDB codes of a full disk or a write the storage engine could not take now (OutOfDiskSpace, WriteConflict, LockTimeout). */
const MONGO_BUSY_CODES: Readonly<Record<number, TransientKind>> = { 14031: 'full', 112: 'busy', 24: 'busy' };

/** The KurrentDB client's error tags (kurrentDBErrors.ts isTransportError) for a node or connection that is not there now. */
const KURRENT_TYPES = new Set(['unavailable', 'deadline-exceeded', 'timeout', 'not-leader', 'cancelled']);

/**
 * A transient error that crossed a boundary which keeps only text (a worker thread's reply): its
 * kind, classified where it was thrown, travels with the message.
 */
export class StoreFailureError extends Error {
  override name = 'StoreFailureError';
  constructor(
    message: string,
    readonly kind: TransientKind,
  ) {
    super(message);
  }
}

/** The kind of a transient error, or null when the error says something about the work itself. */
export function transientKind(err: unknown, depth = 0): TransientKind | null {
  if (err instanceof StoreFailureError) return err.kind;
  if (typeof err !== 'object' || err === null || depth > 3) return null;
  const e = err as { name?: unknown; code?: unknown; type?: unknown; errno?: unknown; hasErrorLabel?: unknown; errorLabels?: unknown; cause?: unknown };
  const code = e.code;
  if (typeof code === 'string') {
    for (const [prefix, kind] of SQLITE) if (code === prefix || code.startsWith(`${prefix}_`)) return kind;
    const system = SYSTEM[code];
    if (system) return system;
  }
  const name = typeof e.name === 'string' ? e.name : '';
  if (name.startsWith('Mongo')) {
    if (MONGO_NAMES[name]) return MONGO_NAMES[name];
    if (typeof e.hasErrorLabel === 'function' && MONGO_LABELS.some((l) => (e.hasErrorLabel as (l: string) => boolean).call(err, l))) return 'failover';
    if (Array.isArray(e.errorLabels) && MONGO_LABELS.some((l) => (e.errorLabels as unknown[]).includes(l))) return 'failover';
    if (typeof code === 'number' && MONGO_FAILOVER_CODES.has(code)) return 'failover';
    if (typeof code === 'number' && MONGO_BUSY_CODES[code]) return MONGO_BUSY_CODES[code];
  }
  if (typeof e.type === 'string' && KURRENT_TYPES.has(e.type) && err instanceof Error) return e.type === 'not-leader' ? 'failover' : 'network';
  // A wrapper (a store's own error, an AggregateError of a fetch) keeps what it wraps in `cause`.
  return transientKind(e.cause, depth + 1);
}

/** The pause before retry number `n` (1-based) of a transient failure: doubling from `firstMs`, capped at `maxMs`. */
export type Backoff = { firstMs: number; maxMs: number };
export const DEFAULT_BACKOFF: Backoff = { firstMs: 1000, maxMs: 30_000 };

export function backoffDelay(n: number, b: Backoff = DEFAULT_BACKOFF): number {
  return Math.min(b.maxMs, b.firstMs * 2 ** Math.min(30, Math.max(0, n - 1)));
}
