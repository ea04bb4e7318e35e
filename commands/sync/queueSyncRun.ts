import { ConcurrencyError, StreamDeletedError, type EventStore, type RecordedEvent } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { loadState } from '../shared/commandHandler.js';
import { connectionSyncState, connectionSyncStream, type ConnectionSyncState, type ManualSyncQueued } from './connectionSync.js';
import { isUnfinished, syncRunState, syncRunStream, type HistoryLimit, type SyncRunEvent, type SyncRunQueued, type SyncRunState, type SyncTrigger } from './syncRun.js';

export type QueueSyncRun = {
  tenantId: string;
  userId: string;
  provider: string;
  trigger: SyncTrigger;
  dataType: string | null;
  window: { start: Date; end: Date };
  at: Date;
  /** The backfill's window was cut at the provider's history reach (issue 22). */
  historyLimit?: HistoryLimit | null;
};

export type LoadedRun = { stream: string; id: number; state: SyncRunState; revision: number };

/** A run as its stream holds it, with its id (the position of its first event); null when it does not exist. */
export async function loadSyncRun(eventStore: EventStore, stream: string): Promise<LoadedRun | null> {
  let events: RecordedEvent<SyncRunEvent>[];
  try {
    events = (await eventStore.readStream(stream)) as RecordedEvent<SyncRunEvent>[];
  } catch (err) {
    if (err instanceof StreamDeletedError) return null;
    throw err;
  }
  if (events.length === 0) return null;
  let state = syncRunState.initialState();
  for (const e of events) state = syncRunState.evolve(state, e);
  return { stream, id: events[0]!.globalPosition, state, revision: events[events.length - 1]!.streamRevision };
}

/**
 * Queues a run under the stream name its trigger gives (syncRunStream): queueing the same name
 * again answers the run already there, `created` false.
 */
export async function queueSyncRun(
  eventStore: EventStore,
  stream: string,
  cmd: QueueSyncRun,
  /** Queued and claimed in one append, by a writer that carries the run out itself (a push delivery). */
  claimFor?: { worker: string; leaseMs: number },
): Promise<LoadedRun & { created: boolean }> {
  if (!(cmd.window.start < cmd.window.end)) throw new DomainError('invalid', 'the window must start before it ends');
  const event: SyncRunQueued = {
    type: 'sync.run_queued',
    data: {
      tenant_id: cmd.tenantId,
      user_id: cmd.userId,
      provider: cmd.provider,
      trigger: cmd.trigger,
      data_type: cmd.dataType,
      window_start: cmd.window.start.toISOString(),
      window_end: cmd.window.end.toISOString(),
      created_at: cmd.at.toISOString(),
      ...(cmd.historyLimit ? { history_limit: cmd.historyLimit } : {}),
    },
  };
  const events: SyncRunEvent[] = [event];
  if (claimFor) {
    const base = { tenant_id: cmd.tenantId, user_id: cmd.userId, provider: cmd.provider };
    const leaseUntil = new Date(cmd.at.getTime() + claimFor.leaseMs).toISOString();
    events.push({ type: 'sync.run_started', data: { ...base, attempt: 1, worker: claimFor.worker, started_at: cmd.at.toISOString(), lease_until: leaseUntil } });
  }
  try {
    const result = await eventStore.appendToStream(stream, events, { expectedRevision: 'no_stream' });
    let state = syncRunState.initialState();
    for (const e of events) state = syncRunState.evolve(state, e as RecordedEvent<SyncRunEvent>);
    // The run's id is its first event's position; the append answers its last one's.
    const id = events.length === 1 ? result.lastPosition : (await eventStore.readStream(stream, { maxCount: 1 }))[0]!.globalPosition;
    return { stream, id, state, revision: events.length - 1, created: true };
  } catch (err) {
    if (err instanceof StreamDeletedError) throw new DomainError('gone', 'the user is being deleted');
    if (!(err instanceof ConcurrencyError)) throw err;
    const existing = await loadSyncRun(eventStore, stream);
    if (!existing) throw err;
    return { ...existing, created: false };
  }
}

/**
 * POST …/sync (spec "Sync run" state table): one manual run of a connection at a time. The
 * connection's sync stream names the manual run in flight; a request that finds it unfinished
 * answers it (`created` false), otherwise it names a new one at the revision it read, so of two
 * racing requests one queues and the other answers that run.
 */
export async function requestManualSync(
  eventStore: EventStore,
  cmd: Omit<QueueSyncRun, 'trigger' | 'window'> & { window: (sync: ConnectionSyncState) => { start: Date; end: Date } },
): Promise<LoadedRun & { created: boolean }> {
  const ledger = connectionSyncStream(cmd.userId, cmd.provider);
  for (let attempt = 0; attempt < 10; attempt++) {
    const { state, revision } = await loadState(eventStore, ledger, connectionSyncState);
    const window = cmd.window(state);
    if (state.manualRun) {
      const current = await loadSyncRun(eventStore, state.manualRun);
      if (current && isUnfinished(current.state.status)) return { ...current, created: false };
      // Named by a request that has not queued it yet (or died before): queued under that name, once.
      if (!current) return queueSyncRun(eventStore, state.manualRun, { ...cmd, trigger: 'manual', window });
    }
    const stream = syncRunStream(cmd.userId, cmd.provider, `m${(revision ?? -1) + 1}`);
    const named: ManualSyncQueued = {
      type: 'connection_sync.manual_queued',
      data: { tenant_id: cmd.tenantId, user_id: cmd.userId, provider: cmd.provider, run_stream: stream, at: cmd.at.toISOString() },
    };
    try {
      await eventStore.appendToStream(ledger, [named], { expectedRevision: revision ?? 'no_stream' });
    } catch (err) {
      if (err instanceof ConcurrencyError) continue;
      if (err instanceof StreamDeletedError) throw new DomainError('gone', 'the user is being deleted');
      throw err;
    }
    return queueSyncRun(eventStore, stream, { ...cmd, trigger: 'manual', window });
  }
  throw new DomainError('conflict', 'the connection is busy; retry the request');
}
