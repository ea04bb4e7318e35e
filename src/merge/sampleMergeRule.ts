import { findQuantityType } from '../catalog/quantityCatalog.js';
import { quantityMaxSpanMs } from '../catalog/intervalBounds.js';
import { matchReachMs, type MatchRule } from './matchRules.js';
import { sourceOrderFor, type SourcePriorities } from './sourceRanking.js';

export type MergeRule = {
  rule: MatchRule;
  order: readonly string[];
  /** How far apart two matching records' starts can be. */
  reachMs: number;
  /**
   * The longest interval a record of the partition spans, a constant of the rules (the hard
   * bounds of src/catalog/intervalBounds.ts, which ingestion enforces), never read from the data.
   * The merged view treats a longer record, stored before the bounds existed, as ending this long
   * after its start: every scan around a record is then bounded by the rules alone.
   */
  maxSpanMs: number;
  /** How far back a neighbour can start and still match: the longest span for rules that compare intervals, none for rules that compare starts. */
  lookbackMs: number;
};

/** Rules that compare intervals (overlap, shared share) need the neighbours that started up to a span earlier. */
export function mergeRule(rule: MatchRule, order: readonly string[], maxSpanMs: number): MergeRule {
  const comparesIntervals = rule === 'count' || rule === 'other' || rule === 'session';
  return { rule, order, reachMs: matchReachMs(rule), maxSpanMs, lookbackMs: comparesIntervals ? maxSpanMs : 0 };
}

/**
 * How samples of one type are merged (spec "Merged view"): compared with every provider's samples
 * of the type by the catalog's match rule, ranked by the type's source order. The projection that
 * keeps the merged flags and the queries that explain them share it.
 */
export function sampleMergeRule(type: string, priorities?: SourcePriorities): MergeRule {
  const t = findQuantityType(type);
  return mergeRule(t?.match ?? 'other', sourceOrderFor(type, t?.group ?? 'other', priorities), quantityMaxSpanMs(type));
}
