import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import { SYNC_RUNS, type SyncRunDoc } from '../../projections/sync/syncRunsProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';
import type { HistoryLimit } from '../../commands/sync/syncRun.js';
import { connectedProvider } from '../../src/catalog/providers.js';

/** The Sync run resource (spec "Sync run"). */
export type SyncRunView = Pick<
  SyncRunDoc,
  | 'id'
  | 'provider'
  | 'trigger'
  | 'status'
  | 'data_type'
  | 'window_start'
  | 'window_end'
  | 'attempts'
  | 'objects_stored'
  | 'error'
  | 'created_at'
  | 'started_at'
  | 'finished_at'
  | 'next_attempt_at'
> & { history_limit: HistoryLimit | null; note: string | null };

export const toSyncRunView = (d: SyncRunDoc): SyncRunView => ({
  id: d.id,
  provider: d.provider,
  trigger: d.trigger,
  status: d.status,
  data_type: d.data_type,
  window_start: d.window_start,
  window_end: d.window_end,
  attempts: d.attempts,
  objects_stored: d.objects_stored,
  error: d.error,
  created_at: d.created_at,
  started_at: d.started_at,
  finished_at: d.finished_at,
  next_attempt_at: d.next_attempt_at,
  history_limit: d.history_limit ?? null,
  note: d.history_limit ? historyNote(d.provider, d.history_limit) : null,
});

/** What a backfill cut at its provider's history reach says about it (issue 22). */
export function historyNote(slug: string, limit: HistoryLimit): string {
  const name = connectedProvider(slug)?.name ?? slug;
  return `the backfill stopped at ${name}'s history limit: ${name} serves ${limit.days} days back, the window asked from ${limit.asked_start}`;
}

/** GET …/sync-runs: a user's pulls, newest first, optionally of one provider. */
export function listSyncRuns(readStore: ReadStore, q: { tenantId: string; userId: string; provider?: string }, page: PageRequest) {
  const filter: Filter = { user_id: q.userId, tenant_id: q.tenantId, ...(q.provider !== undefined ? { provider: q.provider } : {}) };
  return findPage<SyncRunDoc>(readStore, SYNC_RUNS, { filter, sort: [['id', -1]] }, page);
}

/** One run of the user by its id; null for another user's or tenant's. */
export async function getSyncRun(readStore: ReadStore, q: { tenantId: string; userId: string; id: number }): Promise<SyncRunDoc | null> {
  const [doc] = await readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: q.userId, id: q.id }, limit: 1 });
  return doc && doc.tenant_id === q.tenantId ? doc : null;
}
