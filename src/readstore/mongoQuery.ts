import type { Document } from 'mongodb';
import type { AggregateQuery, Filter, FindQuery, Scalar, SortSpec } from './readStore.js';
import { TIE_BREAKER, withTieBreaker } from './readStore.js';

/** The read store's queries (filters, keyset pages, sorts, aggregations) as MongoDB commands. */

/** Bookkeeping fields of the replay guard and of expiry; never returned to callers. */
export const HIDDEN = { _p: 0, _i: 0, _e: 0, _expires: 0 } as const;
const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$exists']);

/**
 * Copies only the supported operators: an unknown one would otherwise be sent to the server
 * verbatim, and an empty condition object would mean "equals {}" instead of "no condition".
 */
export function toMongoFilter(filter: Filter | undefined): Document {
  const out: Document = {};
  for (const [field, cond] of Object.entries(filter ?? {})) {
    checkField(field);
    if (cond === undefined) continue;
    if (cond === null || typeof cond !== 'object') {
      out[field] = cond;
      continue;
    }
    const ops: Document = {};
    for (const [op, v] of Object.entries(cond)) {
      if (!OPERATORS.has(op)) throw new Error(`unsupported filter operator ${op} on ${field}`);
      if (v !== undefined) ops[op] = Array.isArray(v) ? [...v] : v;
    }
    if (nonEmpty(ops)) out[field] = ops;
  }
  return out;
}

/**
 * Documents strictly after `after` in `sort` order, or null when none can be. Range operators
 * compare within one BSON type only, while null (and a missing field) sorts before every value:
 * `$gt: null` would match nothing, and `$lt: v` would never reach the nulls at the end of a
 * descending order.
 */
function keysetFilter(sort: SortSpec, after: readonly Scalar[]): Document | null {
  if (after.length !== sort.length) throw new Error('cursor does not match the sort');
  const branches: Document[] = [];
  const prefix: Document = {};
  for (let i = 0; i < sort.length; i++) {
    const [field, dir] = sort[i]!;
    const value = after[i] as Scalar;
    checkField(field);
    const conds: (Document | null)[] = [];
    if (value === null) {
      if (dir === 1) conds.push({ $ne: null });
    } else {
      conds.push(dir === 1 ? { $gt: value } : { $lt: value });
      if (dir === -1 && field !== TIE_BREAKER) conds.push(null);
    }
    for (const cond of conds) branches.push({ ...prefix, [field]: cond });
    prefix[field] = value;
  }
  return branches.length ? { $or: branches } : null;
}

/** The pipeline an aggregate sends (exported for the query-plan suite). */
export function aggregatePipeline(query: AggregateQuery): Document[] {
  const id: Document = {};
  query.groupBy.forEach((f, i) => (id[`g${i}`] = `$${checkField(f)}`));
  const group: Document = { _id: id, n: { $sum: 1 } };
  (query.sum ?? []).forEach((f, i) => (group[`s${i}`] = { $sum: `$${checkField(f)}` }));
  (query.min ?? []).forEach((f, i) => (group[`lo${i}`] = { $min: `$${checkField(f)}` }));
  (query.max ?? []).forEach((f, i) => (group[`hi${i}`] = { $max: `$${checkField(f)}` }));
  const sort: Document = {};
  query.groupBy.forEach((_, i) => (sort[`_id.g${i}`] = 1));
  const pipeline: Document[] = [{ $match: toMongoFilter(query.filter) }, { $group: group }];
  if (query.groupBy.length) pipeline.push({ $sort: sort });
  if (query.limit !== undefined) pipeline.push({ $limit: query.limit });
  return pipeline;
}

export type FindCommand = { filter: Document; sort: Map<string, 1 | -1>; projection: Document; limit?: number };

/**
 * The filter, sort, projection and limit a find sends (null: nothing can match). Exported for the
 * query-plan suite, which explains exactly these.
 */
export function findCommand(query: FindQuery): FindCommand | null {
  const sort = withTieBreaker(query.sort);
  let filter = toMongoFilter(query.filter);
  if (query.after) {
    const keyset = keysetFilter(sort, query.after);
    if (!keyset) return null;
    // The exact keyset condition is an $or, which bounds no index scan; the range it implies on
    // the leading sort key does, so the scan starts at the cursor instead of at the filter's start.
    const leading = leadingBound(sort, query.after);
    filter = { $and: [...(Object.keys(filter).length ? [filter] : []), ...(leading ? [leading] : []), keyset] };
  }
  // MongoDB reads a limit of 0 as "no limit".
  if (query.limit === 0) return null;
  const projection = query.fields ? Object.fromEntries([['_id', 1], ...query.fields.map((f) => [checkField(f), 1])]) : HIDDEN;
  return {
    filter,
    sort: new Map(sort.map(([f, d]) => [checkField(f), d])),
    projection,
    ...(query.limit !== undefined && query.limit > 0 ? { limit: query.limit } : {}),
  };
}

/**
 * Index keys as declared, then `_id` in the direction of the last one: every query sorts with `_id`
 * as its final tie-breaker (withTieBreaker), and only an index that ends in the same key, in the
 * same relative direction, gives the sorted page straight from an index scan (no blocking sort).
 */
export function indexKeys(fields: SortSpec): [string, 1 | -1][] {
  const keys = fields.map(([f, d]) => [checkField(f), d] as [string, 1 | -1]);
  if (keys.some(([f]) => f === TIE_BREAKER)) return keys;
  return [...keys, [TIE_BREAKER, keys[keys.length - 1]?.[1] ?? 1]];
}

/**
 * A condition on the first sort key that every document after the cursor meets (a superset of the
 * keyset): from the cursor's value on, in sort order. Null (and missing) sorts before every value,
 * so it stays reachable in descending order, and ascending from null bounds nothing.
 */
export function leadingBound(sort: SortSpec, after: readonly Scalar[]): Document | null {
  const [field, dir] = sort[0]!;
  const value = after[0] as Scalar;
  if (value === null) return dir === 1 ? null : { [field]: null };
  return { [field]: dir === 1 ? { $gte: value } : { $not: { $gt: value } } };
}

export function checkField(field: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(field)) throw new Error(`invalid field path ${field}`);
  return field;
}

export function nonEmpty(o: object | undefined): o is object {
  return o !== undefined && Object.keys(o).length > 0;
}
