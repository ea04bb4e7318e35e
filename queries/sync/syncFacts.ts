import type { ConnectionDoc } from '../../projections/connections/connectionsProjection.js';
import { SYNC_RUNS, type SyncRunDoc } from '../../projections/sync/syncRunsProjection.js';
import { syncRunStream } from '../../commands/sync/syncRun.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { nextPullAtMs, scheduleOffsetMs, slotOf } from '../../commands/sync/syncSchedule.js';

/** The pull schedule of the answering process: its interval, which providers it pulls, and now. */
export type PullSchedule = { intervalMs: number; pulls: (provider: string) => boolean; now: Date };

export type PullFacts = {
  /** A pull is queued, running or waiting out a rate limit. */
  syncing: boolean;
  /** The last pull failed, or the one in progress waits for a retry after a failed attempt. */
  failing: boolean;
  lastError: string | null;
  nextPullAt: string | null;
  /** When the last pull that stored payloads ended. */
  lastReceivedAt: string | null;
  lastNotificationAt: string | null;
};

/** Runs looked at per connection, newest first: enough to find the last of each kind. */
const RECENT = 50;

/** Freshness of a connection as its pulls tell it (contracts §6). */
export async function pullFacts(readStore: ReadStore, c: ConnectionDoc, schedule?: PullSchedule): Promise<PullFacts> {
  const runs = await readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: c.user_id, provider: c.provider }, sort: [['id', -1]], limit: RECENT });
  const open = runs.filter((r) => r.status === 'queued' || r.status === 'running' || r.status === 'rate_limited');
  const retrying = runs.filter((r) => r.status === 'retrying');
  const lastFinished = runs.find((r) => r.status === 'succeeded' || r.status === 'failed');
  const failing = retrying.length > 0 || lastFinished?.status === 'failed';
  const errored = failing ? (retrying[0] ?? lastFinished) : undefined;
  const received = runs.find((r) => r.status === 'succeeded' && (r.objects_stored ?? 0) > 0);
  const notified = runs.find((r) => r.trigger === 'notification');
  return {
    syncing: open.length > 0,
    failing,
    lastError: errored?.error ?? null,
    nextPullAt: c.status === 'active' && schedule ? await nextPullAt(readStore, c, runs, schedule) : null,
    lastReceivedAt: received?.finished_at ?? null,
    lastNotificationAt: notified?.created_at ?? null,
  };
}

async function nextPullAt(readStore: ReadStore, c: ConnectionDoc, runs: SyncRunDoc[], s: PullSchedule): Promise<string | null> {
  if (!s.pulls(c.provider)) return null;
  // A run waiting for its turn or its retry is the next pull.
  const waiting = runs
    .filter((r) => (r.status === 'queued' || r.status === 'retrying' || r.status === 'rate_limited') && r.next_attempt_at)
    .map((r) => Date.parse(r.next_attempt_at!));
  if (waiting.length > 0) return new Date(Math.max(s.now.getTime(), Math.min(...waiting))).toISOString();
  const offset = scheduleOffsetMs(c.user_id, c.provider, s.intervalMs);
  const slot = slotOf(s.now.getTime(), offset, s.intervalMs);
  const queued = (await readStore.get<SyncRunDoc>(SYNC_RUNS, syncRunStream(c.user_id, c.provider, `s${slot}`))) !== null;
  return new Date(nextPullAtMs(Date.parse(c.connected_at), offset, s.intervalMs, s.now.getTime(), queued)).toISOString();
}
