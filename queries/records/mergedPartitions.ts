import type { Doc, Filter, ReadStore, Scalar, SortSpec } from '../../src/readstore/readStore.js';
import { withTieBreaker } from '../../src/readstore/readStore.js';
import { getPath } from '../../src/readstore/documentUpdate.js';
import type { Page, PageRequest } from '../shared/page.js';
import type { View } from './mergedPage.js';
import { hiddenByBetterSource, matchReachMs, type Interval, type MatchRule } from '../../src/merge/matchRules.js';
import type { Stream } from '../../src/merge/sourceRanking.js';

/** How the records of one partition (e.g. one category type) are merged. */
export type PartitionRules = {
  /** Filter for the records that may match a record of this partition (without the window). */
  neighbourFilter: Filter;
  rule: MatchRule;
  order: readonly string[];
  lookbackMs: number;
};

export type PartitionedListSpec<T extends Doc> = {
  collection: string;
  filter: Filter;
  sort: SortSpec;
  startField: string;
  interval: (doc: T) => Interval;
  stream: (doc: T) => Stream;
  /** The fields `interval` and `stream` read: neighbours are fetched with these alone. */
  neighbourFields?: readonly string[];
  /** The fields the caller needs of the listed records (with the sort and neighbour fields); absent: whole records. */
  rowFields?: readonly string[];
  /** The partition a record belongs to; records of different partitions never match. */
  partitionOf: (doc: T) => string;
  rulesFor: (partition: string) => PartitionRules;
};

/**
 * listInView (mergedPage.ts) for a list that mixes metrics merged by different rules and
 * orders, such as category samples of every type: each page's records are checked against
 * their own partition's neighbours only. With a single partition it answers exactly what
 * listInView answers.
 */
export async function listInViewByPartition<T extends Doc>(readStore: ReadStore, spec: PartitionedListSpec<T>, view: View, page: PageRequest): Promise<Page<T & { primary: boolean }>> {
  const sort = withTieBreaker(spec.sort);
  const keyOf = (d: T) => sort.map(([f]) => (getPath(d, f) ?? null) as Scalar);
  const out: (T & { primary: boolean })[] = [];
  let after = page.after ?? undefined;
  const chunk = Math.max(page.limit + 1, 200);
  for (;;) {
    const rows = await readStore.find<T>(spec.collection, { filter: spec.filter, sort, limit: chunk, after, ...(spec.rowFields ? { fields: spec.rowFields } : {}) });
    if (rows.length === 0) return { items: out, next: null };
    const hidden = await hiddenIn(readStore, spec, rows);
    for (const row of rows) {
      const primary = !hidden.has(row._id);
      if (view === 'merged' && !primary) continue;
      if (out.length === page.limit) return { items: out, next: keyOf(out[out.length - 1]!) };
      out.push({ ...row, primary });
    }
    if (rows.length < chunk) return { items: out, next: null };
    after = keyOf(rows[rows.length - 1]!);
  }
}

async function hiddenIn<T extends Doc>(readStore: ReadStore, spec: PartitionedListSpec<T>, rows: readonly T[]): Promise<Set<string>> {
  const groups = new Map<string, T[]>();
  for (const r of rows) {
    const p = spec.partitionOf(r);
    let g = groups.get(p);
    if (!g) groups.set(p, (g = []));
    g.push(r);
  }
  const hidden = new Set<string>();
  const wrap = (d: T) => ({ key: d._id, ...spec.interval(d), ...spec.stream(d) });
  for (const [partition, members] of groups) {
    const rules = spec.rulesFor(partition);
    const reach = matchReachMs(rules.rule);
    let lo = Infinity;
    let hi = -Infinity;
    for (const r of members) {
      const iv = spec.interval(r);
      lo = Math.min(lo, iv.start);
      hi = Math.max(hi, iv.end);
    }
    const neighbours = await readStore.find<T>(spec.collection, {
      filter: {
        ...rules.neighbourFilter,
        [spec.startField]: { $gte: new Date(lo - reach - rules.lookbackMs).toISOString(), $lte: new Date(hi + reach).toISOString() },
      },
      ...(spec.neighbourFields ? { fields: spec.neighbourFields } : {}),
    });
    for (const key of hiddenByBetterSource(members.map(wrap), neighbours.map(wrap), rules.rule, rules.order)) hidden.add(key);
  }
  return hidden;
}
