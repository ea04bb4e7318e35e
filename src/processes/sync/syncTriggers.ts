import { connectionState, connectionStream, type ConnectionDisconnected, type ConnectionEstablished } from '../../../commands/connections/connection.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { connectionSyncState, connectionSyncStream } from '../../../commands/sync/connectionSync.js';
import { queueSyncRun, type LoadedRun } from '../../../commands/sync/queueSyncRun.js';
import { isUnfinished, syncRunStream, UNFINISHED } from '../../../commands/sync/syncRun.js';
import { cancelSyncRun, succeedSyncRun, claimSyncRun, failSyncRun } from '../../../commands/sync/syncRunTransitions.js';
import { recordSyncOutcome } from '../../../commands/sync/recordSyncOutcome.js';
import type { UserDeletionRequested } from '../../../commands/users/user.js';
import { SYNC_RUNS, type SyncRunDoc } from '../../../projections/sync/syncRunsProjection.js';
import type { EventStore, RecordedEvent } from '../../eventstore/eventStore.js';
import { pulledPayloadId, storeProviderPayload, type PayloadStores } from '../etl/storeProviderPayload.js';
import { defineReactor, type Reactor } from '../../projector/reactor.js';
import type { ReadStore } from '../../readstore/readStore.js';
import { sha256Hex } from '../../shared/secrets.js';
import type { PulledPayload, PullConnector } from '../../sources/shared/pullConnector.js';
import { backfillWindow, withinHistory, type SyncSettings } from '../../../commands/sync/syncSchedule.js';
import { connectedProvider } from '../../catalog/providers.js';

export type TriggerDeps = {
  eventStore: EventStore;
  readStore: ReadStore;
  connectors: Readonly<Partial<Record<string, PullConnector>>>;
  settings: SyncSettings;
  now: () => Date;
  /** Waits until the named read models hold the log up to `position`. */
  settle: (position: number, names: readonly string[]) => Promise<void>;
  /** Puts a run just queued on the work queue (the sync engine's `enqueue`). */
  enqueue?: (run: LoadedRun) => Promise<void>;
  /** Cancels cancelled runs' queue jobs, so a pull under way stops at its next renewal. */
  stopPulls?: (streams: readonly string[], reason: string) => Promise<number>;
};

/** A connection's unfinished runs as the read model holds them once it caught up to `position`. */
async function unfinishedRuns(deps: TriggerDeps, position: number, userId: string, provider?: string): Promise<SyncRunDoc[]> {
  await deps.settle(position, ['sync_runs']);
  return deps.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: userId, ...(provider ? { provider } : {}), status: { $in: [...UNFINISHED] } }, limit: 1000 });
}

/** Cancels every unfinished run of the user (of one provider): disconnect, user deletion, provider erasure. */
export async function cancelRunsOf(deps: TriggerDeps, position: number, userId: string, provider: string | undefined, reason: string): Promise<number> {
  let cancelled = 0;
  const runs = await unfinishedRuns(deps, position, userId, provider);
  for (const run of runs) {
    if (await cancelSyncRun(deps.eventStore, run._id, reason, deps.now())) cancelled++;
  }
  await deps.stopPulls?.(runs.map((r) => r._id), reason);
  return cancelled;
}

/**
 * The process manager of sync runs: a connection established (first time or again) queues its
 * backfill, named by the grant's event so a replay queues nothing twice; a disconnection or a
 * user's deletion cancels the unfinished runs (spec "Sync run": any unfinished → cancelled).
 */
export function syncRunsReactor(deps: TriggerDeps): Reactor {
  return defineReactor<ConnectionEstablished | ConnectionDisconnected | UserDeletionRequested>({
    name: 'sync-runs',
    eventTypes: ['connection.established', 'connection.disconnected', 'user.deletion_requested'],
    handle: async (event) => {
      switch (event.type) {
        case 'connection.established':
          await queueBackfill(deps, event as RecordedEvent<ConnectionEstablished>);
          return;
        case 'connection.disconnected':
          await cancelRunsOf(deps, event.globalPosition, event.data.user_id, event.data.provider, 'the connection was disconnected');
          return;
        case 'user.deletion_requested':
          await cancelRunsOf(deps, event.globalPosition, event.data.user_id, undefined, 'the user is being deleted');
          return;
      }
    },
  });
}

async function queueBackfill(deps: TriggerDeps, event: RecordedEvent<ConnectionEstablished>): Promise<void> {
  const d = event.data;
  if (!deps.connectors[d.provider]) return;
  const sync = (await loadState(deps.eventStore, connectionSyncStream(d.user_id, d.provider), connectionSyncState)).state;
  const at = new Date(d.at);
  // The provider serves no history beyond its documented reach: the run says where it stopped.
  const { window, limit } = withinHistory(backfillWindow(sync, at, deps.settings.backfillDays), connectedProvider(d.provider)?.historyDays ?? null);
  try {
    const run = await queueSyncRun(deps.eventStore, syncRunStream(d.user_id, d.provider, `b${event.globalPosition}`), {
      tenantId: d.tenant_id,
      userId: d.user_id,
      provider: d.provider,
      trigger: 'backfill',
      dataType: null,
      window,
      at,
      historyLimit: limit,
    });
    if (run.created || isUnfinished(run.state.status)) await deps.enqueue?.(run);
  } catch (err) {
    // The user was deleted since: nothing to pull.
    if (err instanceof DomainError && err.code === 'gone') return;
    throw err;
  }
}

const PUSH_LEASE_MS = 60_000;
const notificationRunStream = (userId: string, provider: string, notificationId: string) => syncRunStream(userId, provider, `n${sha256Hex(notificationId).slice(0, 32)}`);

/** The tenant of an active connection, or why it takes no notification. */
async function activeConnection(eventStore: EventStore, userId: string, provider: string): Promise<string> {
  const { state } = await loadState(eventStore, connectionStream(userId, provider), connectionState);
  if (state.status === 'none' || !state.tenantId) throw new DomainError('not_found', `the user has no ${provider} connection`);
  if (state.status !== 'active') throw new DomainError('conflict', `the ${provider} connection is ${state.status}`);
  return state.tenantId;
}

/**
 * A provider told the service that data of a user changed (a provider webhook, a push ping):
 * queues a `notification` run of that window, of `dataType` only when named. `notificationId`
 * (the provider's delivery id, or a digest of the notification) names the run, so a notification
 * delivered twice queues one run.
 */
export async function queueNotificationRun(
  deps: Pick<TriggerDeps, 'eventStore' | 'now' | 'enqueue'>,
  n: { userId: string; provider: string; dataType: string | null; window: { start: Date; end: Date }; notificationId: string },
): Promise<LoadedRun & { created: boolean }> {
  const tenantId = await activeConnection(deps.eventStore, n.userId, n.provider);
  const run = await queueSyncRun(deps.eventStore, notificationRunStream(n.userId, n.provider, n.notificationId), {
    tenantId,
    userId: n.userId,
    provider: n.provider,
    trigger: 'notification',
    dataType: n.dataType,
    window: n.window,
    at: deps.now(),
  });
  if (run.created || isUnfinished(run.state.status)) await deps.enqueue?.(run);
  return run;
}

/**
 * A push provider delivered a user's data in the notification itself (Garmin's push mode): the
 * delivery is a `notification` run that stores each payload through the same path as a pull
 * (tier sync, data_type kept) and succeeds at once with objects_stored. `notificationId` names
 * the run and its payloads: a redelivery stores nothing twice. Answers the run.
 */
export async function recordPushedPayloads(
  deps: PayloadStores & { now: () => Date; afterStored?: (position: number) => Promise<void> },
  n: { userId: string; provider: string; dataType: string | null; window: { start: Date; end: Date }; notificationId: string; payloads: readonly PulledPayload[] },
): Promise<{ id: number; stream: string; objectsStored: number }> {
  const tenantId = await activeConnection(deps.eventStore, n.userId, n.provider);
  const worker = `push-${n.provider}`;
  const run = await queueSyncRun(
    deps.eventStore,
    notificationRunStream(n.userId, n.provider, n.notificationId),
    { tenantId, userId: n.userId, provider: n.provider, trigger: 'notification', dataType: n.dataType, window: n.window, at: deps.now() },
    // Queued already held: no pull worker takes it (a push provider has nothing to pull).
    { worker, leaseMs: PUSH_LEASE_MS },
  );
  if (run.state.status === 'succeeded') return { id: run.id, stream: run.stream, objectsStored: run.state.objectsStored ?? 0 };
  // A redelivery after a delivery that died mid-way (its lease ran out) carries the run on.
  const held = run.created ? run : await claimSyncRun(deps.eventStore, run.stream, worker, PUSH_LEASE_MS, deps.now());
  if (!held) throw new DomainError('conflict', 'this notification is being stored; retry shortly');
  const q = held.state.queued!;
  let stored = 0;
  let last = 0;
  try {
    for (const p of n.payloads) {
      const r = await storeProviderPayload(deps, {
        tenantId: q.tenant_id,
        userId: n.userId,
        provider: n.provider,
        payloadId: pulledPayloadId(run.id, p.ref, p.body),
        body: p.body,
        contentType: p.contentType,
        tier: 'sync',
        dataType: p.dataType,
        actor: `push:${n.provider}`,
        at: deps.now(),
      });
      stored++;
      if (r.position !== null) last = Math.max(last, r.position);
    }
  } catch (err) {
    await failSyncRun(deps.eventStore, held, { reason: 'exhausted', error: err instanceof Error ? err.message.slice(0, 500) : String(err) }, deps.now()).catch(() => null);
    throw err;
  }
  if (last > 0) await deps.afterStored?.(last);
  const done = await succeedSyncRun(deps.eventStore, held, stored, deps.now());
  await recordSyncOutcome(deps.eventStore, done, { synced: true, health: { healthy: true, reason: null, action: null, since: deps.now().toISOString(), retry_at: null } });
  return { id: run.id, stream: run.stream, objectsStored: stored };
}
