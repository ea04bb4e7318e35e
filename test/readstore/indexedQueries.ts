import { listAuditLog } from '../../queries/audit/listAuditLog.js';
import { listConsentHistory } from '../../queries/connections/consentHistory.js';
import { listEtlJobs } from '../../queries/ingestion/listEtlJobs.js';
import { listSamples } from '../../queries/records/listSamples.js';
import { listSleepSessions } from '../../queries/records/listSleep.js';
import { coverageReport } from '../../queries/records/coverage.js';
import { statsFromRollups } from '../../queries/records/rollupStats.js';
import { listWorkouts } from '../../queries/records/listWorkouts.js';
import { listSyncRuns } from '../../queries/sync/listSyncRuns.js';
import { listTenants } from '../../queries/tenants/listTenants.js';
import { listUsers } from '../../queries/users/listUsers.js';
import { listDeliveries } from '../../queries/webhooks/webhookDeliveries.js';
import { projections } from '../../projections/index.js';
import type { AggregateQuery, AggregateRow, CollectionSpec, Doc, FindQuery, JoinBytesQuery, ReadStore } from '../../src/readstore/readStore.js';
import { webhookEngineCollections } from '../../src/webhooks/deliveryDocs.js';
import { IDEMPOTENCY_COLLECTION_SPEC } from '../../src/server/idempotency.js';

/**
 * The hot list queries, run through their real query handlers against a store that records what
 * they ask. Both the index check (runs everywhere) and the MongoDB query-plan suite (explain())
 * use them, so a handler that changes its filter or sort is checked as it is. A joinBytes (statistics)
 * is recorded as the aggregate it is, a filter grouped: both stores read it with an unsorted match
 * of its filter.
 */
export type RecordedQuery = { label: string; collection: string } & ({ kind: 'find'; query: FindQuery } | { kind: 'aggregate'; query: AggregateQuery });

export const hotCollections: readonly CollectionSpec[] = [...projections.flatMap((p) => p.collections), ...webhookEngineCollections, IDEMPOTENCY_COLLECTION_SPEC];

const window = { start: Date.parse('2026-01-01T00:00:00Z'), end: Date.parse('2026-02-01T00:00:00Z') };

/** Every page is asked twice: the first page, and the next one after a cursor (keyset bounds). */
const firstAndNext = (cursor: (string | number | null)[]) => [{ limit: 50 }, { limit: 50, after: cursor }];

export async function recordHotQueries(inner: Pick<ReadStore, 'find' | 'aggregate' | 'aggregateEach' | 'joinBytes' | 'count'> | null = null): Promise<RecordedQuery[]> {
  const out: RecordedQuery[] = [];
  let label = '';
  const store = {
    async find<T extends Doc>(collection: string, query: FindQuery = {}): Promise<T[]> {
      out.push({ label, collection, kind: 'find', query });
      return inner ? inner.find<T>(collection, query) : [];
    },
    async aggregate(collection: string, query: AggregateQuery) {
      out.push({ label, collection, kind: 'aggregate', query });
      return inner ? inner.aggregate(collection, query) : [];
    },
    async aggregateEach(collection: string, query: AggregateQuery, each: (row: AggregateRow) => void) {
      out.push({ label, collection, kind: 'aggregate', query });
      if (inner) await inner.aggregateEach(collection, query, each);
    },
    async joinBytes(collection: string, query: JoinBytesQuery) {
      out.push({ label, collection, kind: 'aggregate', query: { ...(query.filter ? { filter: query.filter } : {}), groupBy: query.groupBy } });
      return inner ? inner.joinBytes(collection, query) : [];
    },
    async count(collection: string, filter?: FindQuery['filter']) {
      return inner ? inner.count(collection, filter) : 0;
    },
  } as unknown as ReadStore;
  const as = async (name: string, run: () => Promise<unknown>) => {
    label = name;
    await run();
  };
  const date = '2026-01-10T00:00:00.000Z';
  for (const view of ['merged', 'all'] as const) {
    for (const page of firstAndNext([date, 'rec-1', 'u1:rec-1'])) {
      await as(`list samples (${view} view${page.after ? ', next page' : ''})`, () => listSamples(store, { userId: 'u1', type: 'steps', window, view }, page));
      await as(`list workouts (${view} view${page.after ? ', next page' : ''})`, () => listWorkouts(store, { userId: 'u1', window, view }, page));
      await as(`list sleep (${view} view${page.after ? ', next page' : ''})`, () => listSleepSessions(store, { userId: 'u1', window, view }, page));
    }
  }
  for (const page of firstAndNext([10, 'a-10'])) {
    await as(`audit log${page.after ? ' (next page)' : ''}`, () => listAuditLog(store, 'tenant:t1', page));
  }
  for (const page of firstAndNext([7, 'd-7'])) {
    await as(`webhook deliveries${page.after ? ' (next page)' : ''}`, () => listDeliveries(store, 'ep1', undefined, page));
    await as(`webhook deliveries by status${page.after ? ' (next page)' : ''}`, () => listDeliveries(store, 'ep1', 'parked', page));
  }
  for (const page of firstAndNext([3, 'job-3'])) {
    await as(`ETL jobs${page.after ? ' (next page)' : ''}`, () => listEtlJobs(store, { tenantId: 't1', status: 'parked' }, page));
    await as(`sync runs${page.after ? ' (next page)' : ''}`, () => listSyncRuns(store, { tenantId: 't1', userId: 'u1' }, page));
    await as(`sync runs of a provider${page.after ? ' (next page)' : ''}`, () => listSyncRuns(store, { tenantId: 't1', userId: 'u1', provider: 'oura' }, page));
  }
  for (const page of firstAndNext(['2026-01-01T00:00:00.000Z', 'x'])) {
    await as(`users${page.after ? ' (next page)' : ''}`, () => listUsers(store, 't1', page));
    await as(`tenants${page.after ? ' (next page)' : ''}`, () => listTenants(store, page));
  }
  for (const page of firstAndNext(['c-9', 'c-9'])) {
    await as(`consent history${page.after ? ' (next page)' : ''}`, () => listConsentHistory(store, 'u1', { after: page.after ?? null, limit: page.limit }));
  }
  for (const view of ['merged', 'all'] as const) {
    await as(`statistics from the daily rollups (${view} view)`, () => statsFromRollups(store, { userId: 'u1', type: 'steps', view }, [window]));
    await as(`coverage (${view} view)`, () => coverageReport(store, { userId: 'u1', window, view }));
  }
  return out;
}
