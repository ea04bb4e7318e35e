import type { Doc, Filter, ReadStore, Scalar, SortSpec } from '../../src/readstore/readStore.js';
import { withTieBreaker } from '../../src/readstore/readStore.js';
import { getPath } from '../../src/readstore/documentUpdate.js';
import type { Page, PageRequest } from '../shared/page.js';
import { hiddenByBetterSource, matchReachMs, type Interval, type MatchRule } from './mergedView.js';
import type { Stream } from './sourceRanking.js';

export type View = 'merged' | 'all';

export type MergedListSpec<T extends Doc> = {
  collection: string;
  /** The list's own filter (user, type, window). */
  filter: Filter;
  sort: SortSpec;
  /** Filter for the records that may match, given the list's own filter minus the window. */
  neighbourFilter: Filter;
  /** Field holding the ISO start used for neighbourhood queries (indexed with neighbourFilter). */
  startField: string;
  interval: (doc: T) => Interval;
  stream: (doc: T) => Stream;
  rule: MatchRule;
  order: readonly string[];
  /** Longest record interval worth looking back for (counts and sessions). */
  lookbackMs: number;
};

/**
 * One page of a list in the requested view. Every record carries `primary`: whether the merged
 * view lists it (no better ranked stream has a matching record). The merged view skips the
 * others, scanning on until the page is full, and the cursor continues after the last record
 * looked at.
 */
export async function listInView<T extends Doc>(readStore: ReadStore, spec: MergedListSpec<T>, view: View, page: PageRequest): Promise<Page<T & { primary: boolean }>> {
  const sort = withTieBreaker(spec.sort);
  const keyOf = (d: T) => sort.map(([f]) => (getPath(d, f) ?? null) as Scalar);
  const out: (T & { primary: boolean })[] = [];
  let after = page.after ?? undefined;
  const chunk = Math.max(page.limit + 1, 200);
  for (;;) {
    const rows = await readStore.find<T>(spec.collection, { filter: spec.filter, sort, limit: chunk, after });
    if (rows.length === 0) return { items: out, next: null };
    const hidden = await hiddenIn(readStore, spec, rows);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      const primary = !hidden.has(row._id);
      if (view === 'merged' && !primary) continue;
      if (out.length === page.limit) {
        // There is at least one more listed record: continue after the last one returned.
        return { items: out, next: keyOf(out[out.length - 1]!) };
      }
      out.push({ ...row, primary });
    }
    if (rows.length < chunk) return { items: out, next: null };
    after = keyOf(rows[rows.length - 1]!);
  }
}

async function hiddenIn<T extends Doc>(readStore: ReadStore, spec: MergedListSpec<T>, rows: readonly T[]): Promise<Set<string>> {
  const reach = matchReachMs(spec.rule);
  let lo = Infinity;
  let hi = -Infinity;
  for (const r of rows) {
    const iv = spec.interval(r);
    lo = Math.min(lo, iv.start);
    hi = Math.max(hi, iv.end);
  }
  const neighbours = await readStore.find<T>(spec.collection, {
    filter: {
      ...spec.neighbourFilter,
      [spec.startField]: { $gte: new Date(lo - reach - spec.lookbackMs).toISOString(), $lte: new Date(hi + reach).toISOString() },
    },
  });
  const wrap = (d: T) => ({ key: d._id, ...spec.interval(d), ...spec.stream(d) });
  return hiddenByBetterSource(rows.map(wrap), neighbours.map(wrap), spec.rule, spec.order);
}
