import type { MatchKind } from '../catalog/quantityCatalog.js';
import { compareStreams, type Stream } from './sourceRanking.js';

/** Spec "Merged view": when two sources' records are the same measurement. */
export type MatchRule = MatchKind | 'session';

const MIN = 60_000;
const TOLERANCE_MS: Record<Exclude<MatchRule, 'count' | 'other' | 'session'>, number> = {
  reading: 5 * MIN,
  nightly: 12 * 60 * MIN,
  body: 60 * MIN,
};

export type Interval = { start: number; end: number };

export function recordsMatch(rule: MatchRule, a: Interval, b: Interval): boolean {
  switch (rule) {
    case 'reading':
    case 'nightly':
    case 'body':
      return Math.abs(a.start - b.start) <= TOLERANCE_MS[rule];
    case 'session': {
      // They share at least half of the shorter one.
      const shared = Math.min(a.end, b.end) - Math.max(a.start, b.start);
      const shorter = Math.min(a.end - a.start, b.end - b.start);
      return shared > 0 && shared * 2 >= shorter;
    }
    case 'count':
    case 'other':
    default:
      // Intervals overlap; an instant overlaps an interval that contains it.
      if (a.start === a.end || b.start === b.end) return a.start <= b.end && b.start <= a.end;
      return a.start < b.end && b.start < a.end;
  }
}

/**
 * How far around a record's interval a better source's record can lie and still match, so the
 * neighbourhood query knows what to fetch.
 */
export function matchReachMs(rule: MatchRule): number {
  return rule === 'reading' || rule === 'nightly' || rule === 'body' ? TOLERANCE_MS[rule] : 0;
}

/**
 * A record's interval as the merged view sees it: cut to the rule's longest span (MergeRule.maxSpanMs).
 * Ingestion rejects longer records; one stored before the bounds existed is treated as ending
 * that long after its start, so that no scan around it depends on how long it claims to be.
 */
export function boundedInterval(start: number, end: number, maxSpanMs: number): Interval {
  return { start, end: Math.min(end, start + maxSpanMs) };
}

/** A module-level comparator, not one made per call: V8 optimises it once (BENCHMARKS.md, issue 38, h17/compile). */
const byStart = (x: Interval, y: Interval): number => x.start - y.start;

/**
 * A record is listed in the merged view only when no better ranked stream has a matching record.
 * `neighbours` must hold every record that could match any of `records` (all streams). A
 * neighbour is looked for from a record's start back by the reach and the longest neighbour, at
 * most `lookbackMs`, a constant of the rules (MergeRule.lookbackMs: the longest span for rules
 * that compare intervals, whose intervals must be cut to it, boundedInterval; none for rules that
 * compare starts): short records keep scans short, and no record can widen them beyond the rule.
 */
export function hiddenByBetterSource<R extends Stream & Interval & { key: string }>(
  records: readonly R[],
  neighbours: readonly R[],
  rule: MatchRule,
  order: readonly string[],
  lookbackMs: number,
): Set<string> {
  const hidden = new Set<string>();
  const sorted = [...neighbours].sort(byStart);
  const reach = matchReachMs(rule);
  const back = Math.min(lookbackMs, sorted.reduce((m, n) => Math.max(m, n.end - n.start), 0));
  for (const r of records) {
    const lo = lowerBound(sorted, r.start - reach - back);
    for (let i = lo; i < sorted.length; i++) {
      const n = sorted[i]!;
      if (n.start > r.end + reach) break;
      if (n.key === r.key || compareStreams(n, r, order) >= 0) continue;
      if (recordsMatch(rule, r, n)) {
        hidden.add(r.key);
        break;
      }
    }
  }
  return hidden;
}

/**
 * The keys of `records` the merged view does not list: those whose quality flags leave them out
 * (`excluded`, contracts §15) and those a better ranked stream's matching record hides. A record
 * left out hides nothing, so the next best source's matching record is listed in its place.
 */
export function unlistedByMergedView<R extends Stream & Interval & { key: string; excluded: boolean }>(
  records: readonly R[],
  neighbours: readonly R[],
  rule: MatchRule,
  order: readonly string[],
  lookbackMs: number,
): Set<string> {
  const unlisted = hiddenByBetterSource(
    records.filter((r) => !r.excluded),
    neighbours.filter((n) => !n.excluded),
    rule,
    order,
    lookbackMs,
  );
  for (const r of records) if (r.excluded) unlisted.add(r.key);
  return unlisted;
}

function lowerBound<R extends Interval>(sorted: readonly R[], start: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.start < start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
