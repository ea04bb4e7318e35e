import { hash } from 'node:crypto';

/**
 * Record ids are integers (spec "Resources"). A record gets its id from the event that first
 * stored it: the event's number in its projection's dense sequence (1, 2, 3… over the events
 * that carry records, src/projector/eventSequences.ts) × 10000 + its index in the batch (batches
 * hold at most 1000 records). A replay or rebuild gives every record the same id; an update keeps
 * the first one. Dense numbers keep ids far below 2^53 whatever the backend's positions look like
 * (EventStoreDB's are byte offsets): 2^53 / 10^6 events of one projection is about 9 × 10^9.
 */
export const recordId = (sequence: number, index: number): number => safeId(sequence, index, 10_000);

/**
 * Natural key of a provider record: re-sending the same external_id updates, never duplicates.
 * 128 bits of SHA-256 of (user, provider, external_id), base64url: 22 characters instead of the
 * 80 of the three joined, in every row and in the key index of a table of a million samples.
 * Collisions would need about 2^64 records of one store.
 */
export const recordKey = (userId: string, provider: string, externalId: string): string =>
  hash('sha256', `${userId}\u0000${provider}\u0000${externalId}`, 'base64url').slice(0, 22);

/**
 * Child rows that the spec gives an integer id (sleep phases) get it from the event that stored
 * them: its sequence number × 1 000 000 + a counter over every child of that event (all records
 * of the batch together). Children are replaced whenever their parent is re-sent, so a child's id
 * is the one of the event that last sent its parent. Deterministic under replay and rebuild. Ids
 * stay distinct while one event holds fewer than a million children.
 */
export const childRecordId = (sequence: number, childCounter: number): number => safeId(sequence, childCounter, 1_000_000);

/**
 * `sequence × slots + index`, refused (the batch fails, and is dead-lettered if it keeps failing)
 * rather than answered wrong: an id that is not a safe integer would read back as another number
 * in JSON, and an index beyond its slots would collide with the next event's ids.
 */
function safeId(sequence: number, index: number, slots: number): number {
  const id = sequence * slots + index;
  if (!Number.isSafeInteger(sequence) || sequence < 1 || index < 0 || index >= slots || !Number.isSafeInteger(id)) {
    throw new RangeError(`no record id for event ${sequence} of its sequence, item ${index}: outside 1…2^53`);
  }
  return id;
}

/** `_id` of the i-th child row of a parent record (phase, route point, beat). */
export const childKey = (parentKey: string, index: number): string => `${parentKey}#${index}`;
