import { eraseUser } from '../../commands/deletions/eraseUser.js';
import type { UserDeletionRequested } from '../../commands/users/user.js';
import type { EtlJobDoc } from '../../projections/ingestion/etlJobsProjection.js';
import type { EventStore } from '../eventstore/eventStore.js';
import { defineReactor } from '../projector/reactor.js';
import type { RawStore } from '../rawstore/rawStore.js';
import type { ReadStore } from '../readstore/readStore.js';

export type UserDeletionDeps = { eventStore: EventStore; readStore: ReadStore; rawStore: RawStore; pollMs?: number };

/**
 * Runs each requested user deletion to its end (spec "States: User", deleting → removed): the
 * user's running ETL jobs stop first (they check the user before each batch), then the user's
 * rows go (every projection drops them on user.erased), then the raw payloads.
 */
export const userDeletionProcess = (deps: UserDeletionDeps) =>
  defineReactor<UserDeletionRequested>({
    name: 'user-deletion',
    eventTypes: ['user.deletion_requested'],
    handle: (event) =>
      eraseUser(deps.eventStore, event.data, {
        quiesceIngestion: async () => {
          for (;;) {
            const running = await deps.readStore.find<EtlJobDoc>('etl_jobs', { filter: { user_id: event.data.user_id, status: 'running' }, limit: 1 });
            if (running.length === 0) return;
            await new Promise((r) => setTimeout(r, deps.pollMs ?? 250));
          }
        },
        eraseRawPayloads: () => deps.rawStore.deleteNamespace(event.data.user_id),
      }),
  });
