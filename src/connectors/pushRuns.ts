import { recordSyncOutcome } from '../../commands/sync/recordSyncOutcome.js';
import { loadSyncRun } from '../../commands/sync/queueSyncRun.js';
import { syncRunStream, type SyncRunEvent } from '../../commands/sync/syncRun.js';
import { ConcurrencyError, StreamDeletedError, type EventStore } from '../eventstore/eventStore.js';

export type PushRun = {
  tenantId: string;
  userId: string;
  provider: string;
  dataType: string;
  /** Names the run: the stored payload's id, so a push the provider sends again names the same run. */
  key: string;
  window: { start: Date; end: Date };
  objectsStored: number;
  at: Date;
};

/**
 * A push is a sync run that is over when it is recorded (spec "Sync run", trigger `notification`
 * with `data_type`): the provider sent the data, it is stored. The run is appended whole (queued,
 * started, succeeded) in one append, so no worker ever finds it queued and tries to pull it, and
 * it tells the connection it synced. The same key again (the provider retried) records nothing.
 * Answers the run's position, or null when it was recorded before.
 */
export async function recordPushRun(eventStore: EventStore, r: PushRun): Promise<number | null> {
  const stream = syncRunStream(r.userId, r.provider, `n${r.key}`);
  const base = { tenant_id: r.tenantId, user_id: r.userId, provider: r.provider };
  const at = r.at.toISOString();
  const window = r.window.start < r.window.end ? r.window : { start: r.window.start, end: new Date(r.window.start.getTime() + 1000) };
  const events: SyncRunEvent[] = [
    {
      type: 'sync.run_queued',
      data: { ...base, trigger: 'notification', data_type: r.dataType, window_start: window.start.toISOString(), window_end: window.end.toISOString(), created_at: at },
    },
    { type: 'sync.run_started', data: { ...base, attempt: 1, worker: `push:${r.provider}`, started_at: at, lease_until: at } },
    { type: 'sync.run_succeeded', data: { ...base, attempt: 1, trigger: 'notification', objects_stored: r.objectsStored, window_end: window.end.toISOString(), finished_at: at } },
  ];
  let position: number;
  try {
    position = (await eventStore.appendToStream(stream, events, { expectedRevision: 'no_stream' })).lastPosition;
  } catch (err) {
    if (err instanceof ConcurrencyError || err instanceof StreamDeletedError) return null;
    throw err;
  }
  const run = await loadSyncRun(eventStore, stream);
  if (run) await recordSyncOutcome(eventStore, run, { synced: true, health: { healthy: true, reason: null, action: null, since: at, retry_at: null } });
  return position;
}
