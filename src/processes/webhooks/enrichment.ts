import type { UserRegistered } from '../../../commands/users/user.js';
import { userStream } from '../../../commands/users/user.js';
import type { UploadAccepted } from '../../../commands/ingestion/upload.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import { boundedCache } from '../../shared/boundedCache.js';
import type { Enrichment } from '../../webhooks/eventCatalog.js';

/**
 * Reads what a payload needs from the first event of the stream that has it (a user's
 * registration, an upload's acceptance): facts fixed at creation, so a redelivered event after a
 * restart gets the same payload. Remembered for the few thousand most recent users and uploads.
 */
export function eventLogEnrichment(eventStore: EventStore): Enrichment {
  const refs = boundedCache<Promise<string | null>>({ max: 5_000 });
  const providers = boundedCache<Promise<string | null>>({ max: 5_000 });
  // A resumable upload's stream begins with upload.receiving, its acceptance next.
  const first = async (stream: string) => {
    try {
      const head = await eventStore.readStream(stream, { maxCount: 2 });
      return head.find((e) => e.type !== 'upload.receiving') ?? null;
    } catch {
      // A tombstoned or unreadable stream leaves the field null rather than holding back delivery.
      return null;
    }
  };
  return {
    externalRef: (userId) =>
      refs.get(userId, async () => {
        const e = await first(userStream(userId));
        return e?.type === 'user.registered' ? (e.data as UserRegistered['data']).external_ref : null;
      }),
    uploadProvider: (streamName) =>
      providers.get(streamName, async () => {
        const e = await first(streamName);
        return e?.type === 'upload.accepted' ? (e.data as UploadAccepted['data']).provider : null;
      }),
  };
}
