import type { DATA_ERASED, PROVIDER_DATA_ERASED, USER_DELETED } from '../../src/catalog/eventTypes.js';
import type { Event } from '../../src/eventstore/eventStore.js';
import type { UserErased } from '../users/user.js';

/**
 * The events erasure leaves in the log, all on the deletion job's stream (`deletion-<job>`), which
 * is never erased: a rebuild of any read model meets them after every event they erase.
 *
 * Two of them are for read models: on `user.erased` every projection drops the user's rows, on
 * `provider_data.erased` every projection drops the rows of that user and provider (and anything
 * derived from them is computed again without them). The other two announce the end of a job
 * (webhook types of the same names, contracts §8). Their names are in src/catalog/eventTypes.ts.
 */
export type { UserErased };

/** Every row of this user and provider is to go; the user, other providers and the source order stay. */
export type ProviderDataErased = Event<
  typeof PROVIDER_DATA_ERASED,
  { user_id: string; tenant_id: string; provider: string; job_id: string; erased_at: string }
>;

/** A provider-data erasure job ended (spec "Events": data.erased; contracts §8 fields). */
export type DataErased = Event<
  typeof DATA_ERASED,
  { user_id: string; tenant_id: string; external_ref: string | null; provider: string; job_id: string; records_deleted: number; erased_at: string }
>;

/** A user deletion job ended: nothing of the user is left but this and the job. */
export type UserDeleted = Event<typeof USER_DELETED, { user_id: string; tenant_id: string; external_ref: string | null; job_id: string; deleted_at: string }>;

export type ErasureEvent = UserErased | ProviderDataErased | DataErased | UserDeleted;
