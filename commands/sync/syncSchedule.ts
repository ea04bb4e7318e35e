import { createHash } from 'node:crypto';
import type { ConnectionSyncState } from './connectionSync.js';
import type { HistoryLimit } from './syncRun.js';

/** How pulls are planned and retried (README "Configuration"; the choices: docs/connections.md "Sync runs"). */
export type SyncSettings = {
  /** Each active connection is pulled once per interval (SYNC_INTERVAL_MINUTES). */
  intervalMs: number;
  /** A first connection pulls this far back (SYNC_BACKFILL_DAYS). */
  backfillDays: number;
  /** A run whose provider failed this many times is `failed` (SYNC_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** The first retry's wait; each next one waits four times longer, at most MAX_BACKOFF_MS. */
  retryBaseMs: number;
  /** A claim holds the run this long; the worker renews it every third of it while it pulls. */
  leaseMs: number;
  /** A provider call not answered within this is a time-out (`unavailable`: the attempt is retried). */
  callTimeoutMs?: number;
};

export const DEFAULT_SYNC_SETTINGS: SyncSettings = { intervalMs: 60 * 60_000, backfillDays: 30, maxAttempts: 5, retryBaseMs: 60_000, leaseMs: 2 * 60_000 };

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
export const MAX_BACKOFF_MS = 6 * HOUR_MS;
/** A rate limit counts as a failed attempt, but spends no retry; this many in a row still end the run. */
export const MAX_RATE_LIMITED_ATTEMPTS = 20;
/**
 * The longest a rate-limited run waits, whatever the provider asked (issue 20): a day covers every
 * documented limit (Strava's and Fitbit's reset within the day, the others within the hour), and
 * a provider's `Retry-After` of years cannot park a run; a limit still in force then is simply
 * met again (MAX_RATE_LIMITED_ATTEMPTS in a row end the run).
 */
export const MAX_RATE_LIMIT_WAIT_MS = DAY_MS;

/** The wait a 429 or a connector's own rate-limit reading asked for (seconds; 60 when unsaid), at least a second and at most MAX_RATE_LIMIT_WAIT_MS. */
export function rateLimitWaitMs(retryAfterSeconds: number | null): number {
  if (retryAfterSeconds === null || Number.isNaN(retryAfterSeconds)) return 60_000;
  return Math.min(MAX_RATE_LIMIT_WAIT_MS, Math.max(1000, retryAfterSeconds * 1000));
}
/** POST …/sync: `from` at most 30 days back (spec). */
export const MANUAL_FROM_MAX_MS = 30 * DAY_MS;

/** Wait before retry number `retries` (1 = first retry): base, ×4, ×16 … capped. */
export function backoffMs(retries: number, baseMs: number): number {
  return Math.min(MAX_BACKOFF_MS, baseMs * 4 ** Math.max(0, retries - 1));
}

/**
 * Where in each interval a connection's scheduled pull falls: spread by a hash of the user and
 * provider, so the connections of an instance do not all pull at the same instant.
 */
export function scheduleOffsetMs(userId: string, provider: string, intervalMs: number): number {
  const h = createHash('sha256').update(`${userId}\u0000${provider}`).digest();
  return h.readUInt32BE(0) % intervalMs;
}

/** The interval slot `at` falls in, for a connection's offset: a scheduled run is named by its slot. */
export const slotOf = (atMs: number, offsetMs: number, intervalMs: number) => Math.floor((atMs - offsetMs) / intervalMs);
export const slotStartMs = (slot: number, offsetMs: number, intervalMs: number) => slot * intervalMs + offsetMs;

/**
 * The first slot start after the connection was established (its backfill covers the time before):
 * scheduled pulls begin there.
 */
export function firstSlot(connectedAtMs: number, offsetMs: number, intervalMs: number): number {
  const s = slotOf(connectedAtMs, offsetMs, intervalMs);
  return slotStartMs(s, offsetMs, intervalMs) > connectedAtMs ? s : s + 1;
}

/** When the connection's next scheduled pull is due, seen at `now` (the current slot's when it has not run yet). */
export function nextPullAtMs(connectedAtMs: number, offsetMs: number, intervalMs: number, nowMs: number, currentSlotQueued: boolean): number {
  const first = firstSlot(connectedAtMs, offsetMs, intervalMs);
  const current = slotOf(nowMs, offsetMs, intervalMs);
  if (current < first) return slotStartMs(first, offsetMs, intervalMs);
  return slotStartMs(currentSlotQueued ? current + 1 : current, offsetMs, intervalMs);
}

/**
 * The window of a routine or manual pull (spec "POST …/sync"): ends now, starts where the
 * connection's data ends minus one hour (late records of the last hour are pulled again), or a
 * day back for a connection that never synced, or at `from`.
 */
export function followUpWindow(sync: ConnectionSyncState, now: Date, from?: Date): { start: Date; end: Date } {
  if (from) return { start: from, end: now };
  const start = sync.dataEnd ? new Date(Math.min(Date.parse(sync.dataEnd) - HOUR_MS, now.getTime() - 60_000)) : new Date(now.getTime() - DAY_MS);
  // A connection idle for long (a reconnect after weeks) pulls at most the backfill's reach.
  return { start: new Date(Math.max(start.getTime(), now.getTime() - MANUAL_FROM_MAX_MS)), end: now };
}

/**
 * A backfill window cut at how far back the provider's history reaches (`historyDays`, its
 * documentation's limit; null: none): the window it may pull, and the limit when it cut it.
 */
export function withinHistory(window: { start: Date; end: Date }, historyDays: number | null): { window: { start: Date; end: Date }; limit: HistoryLimit | null } {
  if (historyDays === null) return { window, limit: null };
  const floor = window.end.getTime() - historyDays * DAY_MS;
  if (window.start.getTime() >= floor) return { window, limit: null };
  return { window: { start: new Date(floor), end: window.end }, limit: { days: historyDays, asked_start: window.start.toISOString() } };
}

/**
 * The window of the pull a connection makes when it is established: `backfillDays` back on a
 * first connection; after a reconnect, from where its data ended (minus an hour), at most that far.
 */
export function backfillWindow(sync: ConnectionSyncState, now: Date, backfillDays: number): { start: Date; end: Date } {
  const floor = now.getTime() - backfillDays * DAY_MS;
  const start = sync.dataEnd ? Math.max(floor, Math.min(Date.parse(sync.dataEnd) - HOUR_MS, now.getTime() - 60_000)) : floor;
  return { start: new Date(start), end: now };
}
