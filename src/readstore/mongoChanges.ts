import type { AnyBulkWriteOperation, Document } from 'mongodb';
import { nonEmpty, toMongoFilter } from './mongoQuery.js';
import type { Change, UpdateChange } from './readStore.js';

/**
 * The read store's changes as MongoDB bulk-write operations, each guarded so that a replay after
 * a crash skips what already reached a document (mongoReadStore.ts, applyBatch).
 */

/** Stored documents: the caller's fields plus the replay guard's `_p`/`_i`. */
export interface StoredDoc extends Document {
  _id: string;
}

/** Position and index of the change that last wrote a document, and the checkpoint's epoch (see applyBatch). */
export type Tag = { position: number; index: number; epoch: number };

/** The BSON date a TTL index reads, kept beside a collection's `expireAt` field (an ISO instant). */
export const EXPIRES = '_expires';

export function opsFor(c: Change, tag?: Tag, expireAt?: string): AnyBulkWriteOperation<StoredDoc>[] {
  switch (c.op) {
    case 'put': {
      const doc = withExpiry(c.doc, expireAt);
      if (!tag) return [{ replaceOne: { filter: { _id: c.doc._id }, replacement: doc, upsert: true } }];
      // A document of a later epoch means this batch is a stray: the upsert then fails on the
      // duplicate `_id`, and applyBatch reports the lost claim.
      return [
        {
          replaceOne: {
            filter: { _id: c.doc._id, ...notLaterEpoch(tag) },
            replacement: { ...doc, _p: tag.position, _i: tag.index, _e: tag.epoch },
            upsert: true,
          },
        },
      ];
    }
    case 'update':
      return updateOps(c, tag, expireAt);
    case 'delete':
      return [{ deleteOne: { filter: tag ? { _id: c.id, ...notLaterEpoch(tag) } : { _id: c.id } } }];
    case 'deleteMany': {
      const filter = toMongoFilter(c.filter);
      return [{ deleteMany: { filter: tag ? { $and: [filter, notYetApplied(tag), notLaterEpoch(tag)] } : filter } }];
    }
  }
}

/** Documents not written in an epoch after the tag's (documents from before epochs existed included). */
function notLaterEpoch(tag: Tag): Document {
  return { _e: { $not: { $gt: tag.epoch } } };
}

export function withExpiry<T extends Record<string, unknown>>(doc: T, expireAt: string | undefined): T {
  const at = expireAt ? expiryDate(doc[expireAt]) : null;
  return at ? { ...doc, [EXPIRES]: at } : doc;
}

function expiryDate(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t);
}

/**
 * One upserting updateOne when possible. Tagged updates cannot upsert (a guard that does not
 * match an existing document would make the upsert insert a duplicate `_id`), and MongoDB
 * refuses $setOnInsert on a path another operator of the same update touches; both cases first
 * make sure the document exists, then update it without upsert.
 */
function updateOps(c: UpdateChange, tag?: Tag, expireAt?: string): AnyBulkWriteOperation<StoredDoc>[] {
  const filter = { _id: c.id };
  const set: Document = withExpiry({ ...c.set }, expireAt);
  if (tag) {
    set._p = tag.position;
    set._i = tag.index;
    set._e = tag.epoch;
  }
  const update: Document = {};
  if (nonEmpty(set)) update.$set = set;
  const unset = expireAt && c.unset?.includes(expireAt) ? [...c.unset, EXPIRES] : c.unset;
  if (unset?.length) update.$unset = Object.fromEntries(unset.map((k) => [k, '']));
  if (nonEmpty(c.inc)) update.$inc = c.inc;
  if (nonEmpty(c.min)) update.$min = c.min;
  if (nonEmpty(c.max)) update.$max = c.max;
  const onInsert: Document = c.upsert ? withExpiry({ ...c.setOnInsert }, expireAt) : {};
  const touched = [set, c.inc ?? {}, c.min ?? {}, c.max ?? {}].flatMap((o) => Object.keys(o)).concat(c.unset ?? []);
  const clash = Object.keys(onInsert).some((p) => touched.some((q) => overlaps(p, q)));

  if (!tag && !clash) {
    if (nonEmpty(onInsert)) update.$setOnInsert = onInsert;
    // Empty operands are no-ops since MongoDB 5.0; with upsert this still creates `{ _id }`.
    if (!nonEmpty(update)) return c.upsert ? [{ updateOne: { filter, update: { $setOnInsert: {} }, upsert: true } }] : [];
    return [{ updateOne: { filter, update, upsert: c.upsert === true } }];
  }
  const ops: AnyBulkWriteOperation<StoredDoc>[] = [];
  // A document of an earlier epoch is a stray of a batch that raced a rebuild: the rebuild
  // replays its event too, so the change starts from no document, as it did the first time.
  if (tag) ops.push({ deleteOne: { filter: { _id: c.id, _e: { $lt: tag.epoch } } } });
  const inserted = insertedFields(onInsert, c.set);
  if (c.upsert) ops.push({ updateOne: { filter, update: { $setOnInsert: tag ? { ...inserted, _e: tag.epoch } : inserted }, upsert: true } });
  ops.push({ updateOne: { filter: tag ? { ...filter, ...notYetApplied(tag), ...notLaterEpoch(tag) } : filter, update } });
  return ops;
}

/**
 * The insert step also writes the $set fields (the update step writes them again), so that a
 * new document reaches unique indexes with the same fields a single upsert would give it.
 */
function insertedFields(onInsert: Document, set: Record<string, unknown> | undefined): Document {
  const fields: Document = { ...onInsert };
  const own = Object.keys(onInsert);
  for (const [k, v] of Object.entries(set ?? {})) {
    if (!own.some((p) => p !== k && overlaps(p, k))) fields[k] = v;
  }
  return fields;
}

/** Matches documents no change at or after `tag` has written yet. */
function notYetApplied({ position, index }: Pick<Tag, 'position' | 'index'>): Document {
  return { $or: [{ _p: { $exists: false } }, { _p: { $lt: position } }, { _p: position, _i: { $lt: index } }] };
}

function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
}
