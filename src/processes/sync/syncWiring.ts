import type { Logger } from 'pino';
import { syncErasureHook } from '../../../commands/sync/syncErasure.js';
import type { ErasureHook } from '../../../commands/deletions/erasureSteps.js';
import type { Config } from '../../config.js';
import type { DataKeys } from '../../crypto/dataKeys.js';
import type { ValueSealer } from '../../crypto/sealedValue.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import type { Reactor } from '../../projector/reactor.js';
import type { RawStore } from '../../rawstore/rawStore.js';
import type { ReadStore } from '../../readstore/readStore.js';
import { PULL_CONNECTORS, PUSH_CONNECTORS } from '../../sources/registry.js';
import type { PullConnector, PushConnector } from '../../sources/shared/pullConnector.js';
import { DEFAULT_SYNC_SETTINGS, type SyncSettings } from '../../../commands/sync/syncSchedule.js';
import type { WorkQueue } from '../../workqueue/workQueue.js';
import { syncScheduleReactor } from './scheduleRuns.js';
import { syncRunsReactor } from './syncTriggers.js';
import { SyncWorker } from './syncWorker.js';

/** What tests may replace: the clock, the connectors (a test-only one), the settings, and whether the worker polls on its own. */
export type SyncOptions = {
  syncClock?: () => Date;
  pullConnectors?: Readonly<Partial<Record<string, PullConnector>>>;
  pushConnectors?: Readonly<Partial<Record<string, PushConnector>>>;
  syncSettings?: Partial<SyncSettings>;
  /** false: the worker does not poll; a test drives it with `runDue()`. */
  syncPolling?: boolean;
};

/** The sync engine of a service process: its worker, the reactors that queue and cancel runs and enqueue schedules, and its part of erasure. */
export function createSync(
  deps: {
    config: Config;
    eventStore: EventStore;
    readStore: ReadStore;
    rawStore: RawStore;
    dataKeys: DataKeys;
    sealer: ValueSealer;
    settle: (position: number, names: readonly string[]) => Promise<void>;
    kickEtl: () => void;
    /** The work queue pulls and schedules run on (issue 26), and this process's name in it. */
    queue: WorkQueue;
    holder: string;
    log?: Logger;
  },
  options: SyncOptions = {},
): { worker: SyncWorker; reactors: Reactor[]; erasureHook: ErasureHook; polling: boolean } {
  const now = options.syncClock ?? (() => new Date());
  // A pull's lease is a work queue job's like any other (LEASE_MS), renewed by cheap queue heartbeats.
  const settings: SyncSettings = { ...DEFAULT_SYNC_SETTINGS, leaseMs: deps.config.leases.leaseMs, ...deps.config.sync, ...options.syncSettings };
  const pulled = options.pullConnectors ?? PULL_CONNECTORS;
  // A push provider that can be asked for its history gets a backfill run on connect, nothing else.
  const connectors = { ...historyConnectors(options.pushConnectors ?? PUSH_CONNECTORS), ...pulled };
  const worker = new SyncWorker({
    eventStore: deps.eventStore,
    readStore: deps.readStore,
    rawStore: deps.rawStore,
    dataKeys: deps.dataKeys,
    sealer: deps.sealer,
    queue: deps.queue,
    holder: `${deps.holder}/sync`,
    providers: deps.config.providers,
    connectors,
    scheduled: pulled,
    settings,
    now,
    afterStored: async (position) => {
      await deps.settle(position, ['etl_jobs']);
      deps.kickEtl();
    },
    log: deps.log,
  });
  const reactor = syncRunsReactor({
    eventStore: deps.eventStore,
    readStore: deps.readStore,
    connectors,
    settings,
    now,
    settle: deps.settle,
    enqueue: (run) => worker.enqueue(run),
    stopPulls: (streams, reason) => worker.stopPulls(streams, reason),
  });
  const schedule = syncScheduleReactor({ queue: deps.queue, connectors: pulled, settings, kick: () => worker.kick() });
  return { worker, reactors: [reactor, schedule], erasureHook: syncErasureHook({ eventStore: deps.eventStore, readStore: deps.readStore, now, stopPulls: (streams, reason) => worker.stopPulls(streams, reason) }), polling: options.syncPolling !== false };
}

/**
 * A push connector's history request as the connector of its backfill run: the run asks the
 * provider to push the window (src/sources/providers/garmin/history.ts) and stores nothing itself. Any
 * other run of it (a push delivery's run left running by a stopped process) has nothing to pull.
 */
export function historyConnectors(push: Readonly<Partial<Record<string, PushConnector>>>): Record<string, PullConnector> {
  const out: Record<string, PullConnector> = {};
  for (const [slug, c] of Object.entries(push)) {
    const history = c?.history;
    if (!c || !history) continue;
    out[slug] = {
      descriptor: c.descriptor,
      origins: history.origins,
      parser: c.parser,
      async *pull(ctx) {
        if (ctx.trigger !== 'backfill') throw new Error(`${c.descriptor.name} pushes its data: only a backfill asks it for anything`);
        await history.request(ctx);
      },
    };
  }
  return out;
}
