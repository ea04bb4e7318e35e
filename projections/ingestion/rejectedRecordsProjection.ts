import type { RecordsRejected } from '../../commands/ingestion/ingestedEvents.js';
import { PROVIDER_DATA_ERASED, USER_ERASED } from '../../src/catalog/eventTypes.js';
import type { ProviderDataErased, UserErased } from '../../commands/deletions/erasureEvents.js';
import { defineProjection } from '../../src/projector/projection.js';

export type RejectedRecordDoc = {
  /** `${user_id}|${key}`: the ETL keys a rejected line by its content and its place (line, row, entry), so identical bad lines of one upload each count (contracts §12) and a re-sent upload counts once. */
  _id: string;
  user_id: string;
  tenant_id: string;
  provider: string;
  /** The upload stream of the ETL job that last rejected it. */
  job: string;
  location: string;
  reason: string;
  excerpt: string;
  at: string;
};

export const REJECTED_RECORDS = 'rejected_records';

/**
 * Lines and objects the ETL could not store (spec "Coverage report": `rejected_records`; contracts
 * §3: kept for inspection). One document per rejected content and place: identical bad lines of
 * one upload are each counted (contracts §12); the same upload sent again is counted once.
 *
 * Not tracked yet: recovery. The spec counts lines "not recovered"; no path recovers a rejected
 * line today (a corrected line has different content, hence a different key, and is stored as
 * a record), so every document here counts until the user is erased.
 */
export const rejectedRecordsProjection = defineProjection<RecordsRejected | UserErased | ProviderDataErased>({
  name: REJECTED_RECORDS,
  collections: [{ name: REJECTED_RECORDS, indexes: [{ fields: [['user_id', 1], ['provider', 1]] }] }],
  eventTypes: ['records.rejected', USER_ERASED, PROVIDER_DATA_ERASED],
  evolve: (event) => {
    switch (event.type) {
      case 'records.rejected': {
        const d = event.data;
        return d.items.map((item) => ({
          op: 'put' as const,
          collection: REJECTED_RECORDS,
          doc: {
            _id: `${d.user_id}|${item.key}`,
            user_id: d.user_id,
            tenant_id: d.tenant_id,
            provider: d.provider,
            job: d.job,
            location: item.location,
            reason: item.reason,
            excerpt: item.excerpt,
            at: d.at,
          } satisfies RejectedRecordDoc,
        }));
      }
      case 'user.erased':
        return [{ op: 'deleteMany' as const, collection: REJECTED_RECORDS, filter: { user_id: event.data.user_id } }];
      case 'provider_data.erased':
        return [{ op: 'deleteMany' as const, collection: REJECTED_RECORDS, filter: { user_id: event.data.user_id, provider: event.data.provider } }];
      default:
        return [];
    }
  },
});
