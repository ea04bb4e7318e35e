import { hash } from 'node:crypto';

/**
 * Record ids are integers (spec "Resources"). A record gets its id from the event that first
 * stored it: global position × 10000 + its index in the batch (batches hold fewer than 10000).
 * A replay or rebuild gives every record the same id; an update keeps the first one.
 */
export const recordId = (globalPosition: number, index: number): number => globalPosition * 10_000 + index;

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
 * them: global position × 1 000 000 + a counter over every child of that event (all records of
 * the batch together). Children are replaced whenever their parent is re-sent, so a child's id is
 * the one of the event that last sent its parent. Deterministic under replay and rebuild. Ids
 * stay distinct while one event holds fewer than a million children.
 */
export const childRecordId = (globalPosition: number, childCounter: number): number => globalPosition * 1_000_000 + childCounter;

/** `_id` of the i-th child row of a parent record (phase, route point, beat). */
export const childKey = (parentKey: string, index: number): string => `${parentKey}#${index}`;
