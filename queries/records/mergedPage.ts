import type { Doc, Filter, ReadStore, SortSpec } from '../../src/readstore/readStore.js';
import type { Page, PageRequest } from '../shared/page.js';
import { listInViewByPartition } from './mergedPartitions.js';
import type { Interval, MatchRule } from '../../src/merge/matchRules.js';
import type { Stream } from '../../src/merge/sourceRanking.js';

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
  /** The fields `interval` and `stream` read: neighbours are fetched with these alone. */
  neighbourFields?: readonly string[];
  /** The fields the caller needs of the listed records (with the sort and neighbour fields); absent: whole records. */
  rowFields?: readonly string[];
  rule: MatchRule;
  order: readonly string[];
  /** Longest record interval worth looking back for (counts and sessions). */
  lookbackMs: number;
};

/**
 * One page of a list in the requested view. Every record carries `primary`: whether the merged
 * view lists it (no better ranked stream has a matching record). The merged view skips the
 * others, scanning on until the page is full, and the cursor continues after the last record
 * returned. A list of one metric is one partition of listInViewByPartition.
 */
export function listInView<T extends Doc>(readStore: ReadStore, spec: MergedListSpec<T>, view: View, page: PageRequest): Promise<Page<T & { primary: boolean }>> {
  const rules = { neighbourFilter: spec.neighbourFilter, rule: spec.rule, order: spec.order, lookbackMs: spec.lookbackMs };
  return listInViewByPartition(
    readStore,
    {
      collection: spec.collection,
      filter: spec.filter,
      sort: spec.sort,
      startField: spec.startField,
      interval: spec.interval,
      stream: spec.stream,
      ...(spec.neighbourFields ? { neighbourFields: spec.neighbourFields } : {}),
      ...(spec.rowFields ? { rowFields: spec.rowFields } : {}),
      partitionOf: () => '',
      rulesFor: () => rules,
    },
    view,
    page,
  );
}
