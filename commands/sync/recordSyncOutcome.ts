import type { EventStore } from '../../src/eventstore/eventStore.js';
import { handleCommand } from '../shared/commandHandler.js';
import { connectionSyncState, connectionSyncStream, sameKind, type ConnectionSyncEvent, type SyncHealth } from './connectionSync.js';
import type { SyncRunState } from './syncRun.js';

/**
 * What a run's attempt tells the connection: a success moves where its data ends (and marks the
 * first backfill), and every outcome sets the connection's health as pulls see it; a change of
 * health is appended (and becomes `connection.health_changed`) only when it differs from the last.
 */
export async function recordSyncOutcome(
  eventStore: EventStore,
  run: { stream: string; state: SyncRunState },
  outcome: { synced: boolean; health: SyncHealth },
): Promise<void> {
  const q = run.state.queued!;
  const base = { tenant_id: q.tenant_id, user_id: q.user_id, provider: q.provider };
  await handleCommand(eventStore, connectionSyncStream(q.user_id, q.provider), connectionSyncState, (state): ConnectionSyncEvent[] => {
    const events: ConnectionSyncEvent[] = [];
    if (outcome.synced) {
      events.push({
        type: 'connection_sync.synced',
        data: { ...base, run_stream: run.stream, trigger: q.trigger, ...(q.data_type ? { data_type: q.data_type } : {}), window_end: q.window_end, initial_backfill: q.trigger === 'backfill' && !state.backfilled, at: outcome.health.since },
      });
    }
    const before = state.health;
    // A first outcome that is healthy is what the connection already shows: nothing to tell.
    if (before === null && outcome.health.healthy) return events;
    if (before !== null && sameKind(before, outcome.health)) {
      // The same trouble, a new time to retry: kept, not announced, and it stays since when it began.
      if (before.retry_at !== outcome.health.retry_at) {
        events.push({ type: 'connection_sync.health_changed', data: { ...base, health: { ...outcome.health, since: before.since }, previous: before, announce: false, run_stream: run.stream, at: outcome.health.since } });
      }
      return events;
    }
    events.push({ type: 'connection_sync.health_changed', data: { ...base, health: outcome.health, previous: before, announce: true, run_stream: run.stream, at: outcome.health.since } });
    return events;
  });
}
