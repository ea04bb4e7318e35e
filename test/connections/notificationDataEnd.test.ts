import { describe, expect, it } from 'vitest';
import { connectionSyncState, type ConnectionSyncEvent } from '../../commands/sync/connectionSync.js';

/**
 * docs/connections.md "Provider webhooks": a run that pulled one data type (a notification naming
 * one) says nothing of the other data types, so where the connection's data ends (the next
 * scheduled window's start) moves only with runs that pulled all of them.
 */
const base = { tenant_id: 't', user_id: 'u', provider: 'oura', run_stream: 'r', initial_backfill: false, at: '2026-03-28T10:00:00Z' };
const synced = (window_end: string, data_type?: string): ConnectionSyncEvent => ({ type: 'connection_sync.synced', data: { ...base, trigger: data_type ? 'notification' : 'scheduled', window_end, ...(data_type ? { data_type } : {}) } });
const fold = (events: ConnectionSyncEvent[]) => events.reduce((s, e) => connectionSyncState.evolve(s, e as Parameters<typeof connectionSyncState.evolve>[1]), connectionSyncState.initialState());

describe('where the connection’s data ends', () => {
  it('moves with a run of every data type', () => {
    expect(fold([synced('2026-03-28T08:00:00.000Z')]).dataEnd).toBe('2026-03-28T08:00:00.000Z');
  });
  it('stays when a notification run of one data type succeeds later', () => {
    expect(fold([synced('2026-03-28T08:00:00.000Z'), synced('2026-03-28T10:00:00.000Z', 'daily_sleep')]).dataEnd).toBe('2026-03-28T08:00:00.000Z');
    expect(fold([synced('2026-03-28T10:00:00.000Z', 'sleep')]).dataEnd).toBeNull();
  });
});
