import type { ConnectionEstablished } from '../../../commands/connections/connection.js';
import { connectionState, connectionStream } from '../../../commands/connections/connection.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { connectionSyncState, connectionSyncStream } from '../../../commands/sync/connectionSync.js';
import { queueSyncRun, type LoadedRun } from '../../../commands/sync/queueSyncRun.js';
import { UNFINISHED, syncRunStream } from '../../../commands/sync/syncRun.js';
import { firstSlot, followUpWindow, scheduleOffsetMs, slotOf, slotStartMs, type SyncSettings } from '../../../commands/sync/syncSchedule.js';
import { SYNC_RUNS, type SyncRunDoc } from '../../../projections/sync/syncRunsProjection.js';
import type { EventStore, RecordedEvent } from '../../eventstore/eventStore.js';
import { defineReactor, type Reactor } from '../../projector/reactor.js';
import type { ReadStore } from '../../readstore/readStore.js';
import type { PullConnector } from '../../sources/shared/pullConnector.js';
import type { WorkQueue } from '../../workqueue/workQueue.js';
import type { JobHandler } from '../jobs/jobHandler.js';
import { SYNC_SCHEDULE_KIND, scheduleJob, type SchedulePayload } from './syncJobs.js';

export type ScheduleDeps = {
  eventStore: EventStore;
  readStore: ReadStore;
  /** The providers pulled on a schedule. */
  connectors: Readonly<Partial<Record<string, PullConnector>>>;
  settings: SyncSettings;
  now: () => Date;
  /** Puts a queued run's job on the queue (and wakes the engine). */
  enqueueRun: (run: LoadedRun) => Promise<void>;
};

/** The stream of a connection's scheduled run of one slot: every process names it alike, so it is queued once. */
export const scheduledRunStream = (userId: string, provider: string, slot: number) => syncRunStream(userId, provider, `s${slot}`);

/**
 * A connection's schedule as a recurring `sync.schedule` job (issue 26): due at the start of its
 * next slot (syncSchedule.ts), it queues that slot's scheduled pull and waits for the following
 * one. Nothing pages through the connections: the queue finds the due ones on its indexed due
 * time. The job ends when the connection is disconnected (a reconnection enqueues it again); a
 * connection waiting for the user to consent again keeps its schedule and queues nothing.
 */
export function scheduleJobHandler(deps: ScheduleDeps): JobHandler {
  return {
    kind: SYNC_SCHEDULE_KIND,
    concurrency: 4,
    run: async (ctx) => {
      const { user_id: userId, provider } = ctx.job.payload as SchedulePayload;
      const { state } = await loadState(deps.eventStore, connectionStream(userId, provider), connectionState);
      if (state.status === 'none' || state.status === 'disconnected' || !deps.connectors[provider]) return;
      const interval = deps.settings.intervalMs;
      const offset = scheduleOffsetMs(userId, provider, interval);
      const nowMs = deps.now().getTime();
      const slot = slotOf(nowMs, offset, interval);
      if (state.status === 'active' && state.tenantId) await queueScheduledRun(deps, { tenantId: state.tenantId, userId, provider, slot, nowMs });
      return { rescheduleAt: slotStartMs(slot + 1, offset, interval) };
    },
  };
}

/**
 * Queues the scheduled pull of the slot: once per slot (its stream is named by it), none while
 * another pull of the connection is unfinished (the next window then starts where that one ends).
 */
async function queueScheduledRun(deps: ScheduleDeps, c: { tenantId: string; userId: string; provider: string; slot: number; nowMs: number }): Promise<void> {
  const stream = scheduledRunStream(c.userId, c.provider, c.slot);
  const open = await deps.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: c.userId, provider: c.provider, status: { $in: [...UNFINISHED] } }, limit: 1 });
  if (open.length > 0) return;
  const interval = deps.settings.intervalMs;
  const sync = (await loadState(deps.eventStore, connectionSyncStream(c.userId, c.provider), connectionSyncState)).state;
  const slotStart = slotStartMs(c.slot, scheduleOffsetMs(c.userId, c.provider, interval), interval);
  const run = await queueSyncRun(deps.eventStore, stream, {
    tenantId: c.tenantId,
    userId: c.userId,
    provider: c.provider,
    trigger: 'scheduled',
    dataType: null,
    window: followUpWindow(sync, new Date(Math.max(c.nowMs, slotStart))),
    at: new Date(c.nowMs),
  });
  if (run.created || isUnfinishedRun(run)) await deps.enqueueRun(run);
}

const isUnfinishedRun = (run: LoadedRun) => (UNFINISHED as readonly string[]).includes(run.state.status);

/**
 * Enqueues each connection's schedule when it is established (the first time or again), due at
 * its first slot after that moment: the backfill covers the time before. A reactor, so no
 * connection is left without its schedule after a crash; an instance upgraded from the paging
 * scheduler starts it from the beginning of the log and gives every connection its schedule
 * once (a disconnected one's job ends at its first run). Keyed by the connection: a live
 * schedule answers a repeated delivery.
 */
export function syncScheduleReactor(deps: { queue: WorkQueue; connectors: Readonly<Partial<Record<string, PullConnector>>>; settings: SyncSettings; kick?: () => void }): Reactor {
  return defineReactor<ConnectionEstablished>({
    name: 'sync-schedule',
    eventTypes: ['connection.established'],
    handle: async (event: RecordedEvent<ConnectionEstablished>) => {
      const { user_id: userId, provider, at } = event.data;
      if (!deps.connectors[provider]) return;
      const interval = deps.settings.intervalMs;
      const offset = scheduleOffsetMs(userId, provider, interval);
      const first = slotStartMs(firstSlot(Date.parse(at), offset, interval), offset, interval);
      const { created } = await deps.queue.enqueue(scheduleJob(userId, provider, first));
      if (created) deps.kick?.();
    },
  });
}
