import { SYNC_RUNS, type SyncRunDoc } from '../../projections/sync/syncRunsProjection.js';
import { CONNECTED_PROVIDERS } from '../../src/catalog/providers.js';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { tombstone, type ErasureHook } from '../deletions/erasureSteps.js';
import { connectionSyncStream } from './connectionSync.js';
import { SYNC_RUN_PREFIX, syncRunStream, UNFINISHED } from './syncRun.js';
import { cancelSyncRun } from './syncRunTransitions.js';

/** The run streams of a user (of one provider), from the queueing events in the log. */
async function runStreamsOf(eventStore: EventStore, userId: string, provider?: string): Promise<string[]> {
  const prefix = provider ? syncRunStream(userId, provider, '') : `${SYNC_RUN_PREFIX}${userId}-`;
  const streams = new Set<string>();
  let after: number | null = null;
  for (;;) {
    const events = await eventStore.readAll({ after, maxCount: 1000, filter: { streamPrefixes: [prefix], eventTypes: ['sync.run_queued'] } });
    for (const e of events) streams.add(e.streamName);
    if (events.length < 1000) return [...streams];
    after = events[events.length - 1]!.globalPosition;
  }
}

/** How often a provider erasure looks again whether a pull still runs. */
const QUIESCE_POLL_MS = 250;

/**
 * What erasure does to sync runs (spec "Credentials and users": pull jobs and the sync log go with
 * the provider's data; spec "Provider erasure": a pull still running delays the job). Unfinished
 * runs are cancelled first, so no worker starts them again; the erasure waits until none runs on
 * a live lease; then the run streams and the connection's sync stream are tombstoned (the
 * sync_runs rows go with `user.erased` / `provider_data.erased`).
 */
export function syncErasureHook(deps: {
  eventStore: EventStore;
  readStore: ReadStore;
  now?: () => Date;
  /**
   * Stops the pulls of these runs on the work queue (their jobs cancelled, so a pull under way
   * aborts at its next lease renewal); answers when the last lease cancelled would have run out
   * (epoch ms, 0 when none ran): by then no pull of them runs.
   */
  stopPulls?: (streams: readonly string[], reason: string) => Promise<number>;
}): ErasureHook {
  const now = deps.now ?? (() => new Date());
  const runsOf = (userId: string, provider?: string) =>
    deps.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: userId, ...(provider ? { provider } : {}) }, sort: [['id', 1]], limit: 100_000 });
  const cancelAll = async (userId: string, provider: string | undefined, reason: string): Promise<number> => {
    const runs = await runsOf(userId, provider);
    for (const run of runs) if (UNFINISHED.includes(run.status)) await cancelSyncRun(deps.eventStore, run._id, reason, now());
    return (await deps.stopPulls?.(runs.map((r) => r._id), reason)) ?? 0;
  };
  const erase = async (userId: string, provider?: string) => {
    // Found in the log, not the read model: a user's erasure drops the read-model rows meanwhile.
    for (const stream of await runStreamsOf(deps.eventStore, userId, provider)) await tombstone(deps.eventStore, stream);
    for (const p of provider ? [provider] : CONNECTED_PROVIDERS.map((c) => c.slug)) await tombstone(deps.eventStore, connectionSyncStream(userId, p));
  };
  return {
    name: 'sync-runs',
    quiesceProvider: async (userId, provider, signal) => {
      const stoppedBy = await cancelAll(userId, provider, "the provider's data is being erased");
      // A pull that was running stores until its next renewal is refused: wait out its lease (and
      // any run leased on its stream by an earlier version).
      for (;;) {
        signal.throwIfAborted();
        if (now().getTime() < stoppedBy) {
          await new Promise((r) => setTimeout(r, QUIESCE_POLL_MS));
          continue;
        }
        const running = await deps.readStore.find<SyncRunDoc>(SYNC_RUNS, {
          filter: { user_id: userId, provider, status: 'running', lease_until: { $gt: now().toISOString() } },
          limit: 1,
        });
        if (running.length === 0) return;
        await new Promise((r) => setTimeout(r, QUIESCE_POLL_MS));
      }
    },
    eraseProvider: async (job) => {
      await cancelAll(job.userId, job.provider, "the provider's data is being erased");
      await erase(job.userId, job.provider);
    },
    eraseUser: async (job) => {
      await cancelAll(job.userId, undefined, 'the user is being deleted');
      await erase(job.userId);
    },
  };
}
