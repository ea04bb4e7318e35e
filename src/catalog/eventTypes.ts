/**
 * Event type names that layers below the commands need: the crypto wrapper of the event store
 * (src/crypto/openingEventStore.ts) lets erasure events through unopened. The events themselves
 * are declared with their commands (commands/deletions/erasureEvents.ts, docs/erasure.md).
 */

/** Every projection drops the user's rows. */
export const USER_ERASED = 'user.erased' as const;
/** Every projection drops the rows of that user and provider. */
export const PROVIDER_DATA_ERASED = 'provider_data.erased' as const;
/** A provider-data erasure job ended (a webhook type of the same name, contracts §8). */
export const DATA_ERASED = 'data.erased' as const;
/** A user deletion job ended (a webhook type of the same name, contracts §8). */
export const USER_DELETED = 'user.deleted' as const;
