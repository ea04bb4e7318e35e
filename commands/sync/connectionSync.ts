import type { Event } from '../../src/eventstore/eventStore.js';
import type { StreamState } from '../shared/commandHandler.js';

/**
 * What pulls tell about one connection, kept on a stream of its own beside the connection's (so
 * sync bookkeeping never races a consent callback, which appends to the connection stream at the
 * revision it read): the manual run in flight (one at a time), how far pulled data reaches (the
 * next window starts there), the first backfill, and the connection's health as pulls see it.
 */
type Base = { tenant_id: string; user_id: string; provider: string };

export type SyncHealth = { healthy: boolean; reason: string | null; action: 'reconnect' | 'wait' | 'none' | null; since: string; retry_at: string | null };

export type ManualSyncQueued = Event<'connection_sync.manual_queued', Base & { run_stream: string; at: string }>;
export type ConnectionSynced = Event<
  'connection_sync.synced',
  /** `data_type`: the run pulled that one data type only (a notification naming one); absent in runs that pulled all. */
  Base & { run_stream: string; trigger: string; data_type?: string | null; window_end: string; initial_backfill: boolean; at: string }
>;
/** `announce`: the health's kind changed (healthy, reason, action), which is `connection.health_changed`; a new retry_at alone is not. */
export type SyncHealthChanged = Event<'connection_sync.health_changed', Base & { health: SyncHealth; previous: SyncHealth | null; announce: boolean; run_stream: string; at: string }>;

export type ConnectionSyncEvent = ManualSyncQueued | ConnectionSynced | SyncHealthChanged;

export const connectionSyncStream = (userId: string, provider: string) => `connsync-${userId}-${provider}`;

export type ConnectionSyncState = {
  manualRun: string | null;
  /** End of the latest window pulled in full: where the connection's data ends. */
  dataEnd: string | null;
  backfilled: boolean;
  health: SyncHealth | null;
};

export const connectionSyncState: StreamState<ConnectionSyncState, ConnectionSyncEvent> = {
  initialState: () => ({ manualRun: null, dataEnd: null, backfilled: false, health: null }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'connection_sync.manual_queued':
        return { ...state, manualRun: event.data.run_stream };
      case 'connection_sync.synced':
        return {
          ...state,
          // A run of one data type says nothing of the others' data: where the connection's data ends stays.
          dataEnd: event.data.data_type || (state.dataEnd && state.dataEnd > event.data.window_end) ? state.dataEnd : event.data.window_end,
          backfilled: state.backfilled || event.data.initial_backfill,
        };
      case 'connection_sync.health_changed':
        return { ...state, health: event.data.health };
      default:
        return state;
    }
  },
};

export const sameKind = (a: SyncHealth, b: SyncHealth) => a.healthy === b.healthy && a.reason === b.reason && a.action === b.action;
