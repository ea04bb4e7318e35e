import { loadState } from '../../../commands/shared/commandHandler.js';
import { connectionSyncState, connectionSyncStream } from '../../../commands/sync/connectionSync.js';
import { queueSyncRun } from '../../../commands/sync/queueSyncRun.js';
import { UNFINISHED, syncRunStream } from '../../../commands/sync/syncRun.js';
import { CONNECTIONS, type ConnectionDoc } from '../../../projections/connections/connectionsProjection.js';
import { SYNC_RUNS, type SyncRunDoc } from '../../../projections/sync/syncRunsProjection.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import type { ReadStore } from '../../readstore/readStore.js';
import type { PullConnector } from '../../sources/shared/pullConnector.js';
import { firstSlot, followUpWindow, scheduleOffsetMs, slotOf, slotStartMs, type SyncSettings } from '../../../commands/sync/syncSchedule.js';

/** Connections looked at per pass. */
const BATCH = 500;

export type ScheduleDeps = { eventStore: EventStore; readStore: ReadStore; connectors: Readonly<Partial<Record<string, PullConnector>>>; settings: SyncSettings };

/** The stream of a connection's scheduled run of one slot: every process names it alike, so it is queued once. */
export const scheduledRunStream = (userId: string, provider: string, slot: number) => syncRunStream(userId, provider, `s${slot}`);

/**
 * Queues the scheduled pull of each active connection whose slot has begun (syncSchedule.ts): at
 * most one per connection and interval, none while another pull of it is unfinished (the next
 * window then starts where that one ends), none before its first slot after connecting (the
 * backfill covers that time).
 */
/** Answers the position of the last run queued (0 when none), so a caller can wait for the read model. */
export async function scheduleDueRuns(deps: ScheduleDeps, now: Date): Promise<number> {
  const providers = Object.keys(deps.connectors);
  if (providers.length === 0) return 0;
  const nowMs = now.getTime();
  const interval = deps.settings.intervalMs;
  let last = 0;
  let after: (string | number)[] | undefined;
  for (;;) {
    const page = await deps.readStore.find<ConnectionDoc>(CONNECTIONS, {
      filter: { status: 'active', provider: { $in: providers } },
      sort: [['_id', 1]],
      limit: BATCH,
      after,
    });
    for (const c of page) {
      const offset = scheduleOffsetMs(c.user_id, c.provider, interval);
      const slot = slotOf(nowMs, offset, interval);
      if (slot < firstSlot(Date.parse(c.connected_at), offset, interval)) continue;
      const stream = scheduledRunStream(c.user_id, c.provider, slot);
      if (await deps.readStore.get<SyncRunDoc>(SYNC_RUNS, stream)) continue;
      const open = await deps.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: c.user_id, provider: c.provider, status: { $in: [...UNFINISHED] } }, limit: 1 });
      if (open.length > 0) continue;
      const sync = (await loadState(deps.eventStore, connectionSyncStream(c.user_id, c.provider), connectionSyncState)).state;
      const result = await queueSyncRun(deps.eventStore, stream, {
        tenantId: c.tenant_id,
        userId: c.user_id,
        provider: c.provider,
        trigger: 'scheduled',
        dataType: null,
        window: followUpWindow(sync, new Date(Math.max(nowMs, slotStartMs(slot, offset, interval)))),
        at: now,
      }).catch(() => null);
      if (result?.created) last = Math.max(last, result.id);
    }
    if (page.length < BATCH) return last;
    after = [page[page.length - 1]!._id];
  }
}
