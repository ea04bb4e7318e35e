import { findQuantityType } from '../catalog/quantityCatalog.js';
import { matchReachMs, type MatchRule } from './matchRules.js';
import { sourceOrderFor, type SourcePriorities } from './sourceRanking.js';

export type MergeRule = {
  rule: MatchRule;
  order: readonly string[];
  /** How far apart two matching records' starts can be. */
  reachMs: number;
  /** Longest record interval worth looking back for (counts): a record starting this long before another can still overlap it. */
  lookbackMs: number;
};

const LONGEST_COUNT_INTERVAL_MS = 36 * 3_600_000;

/**
 * How samples of one type are merged (spec "Merged view"): compared with every provider's samples
 * of the type by the catalog's match rule, ranked by the type's source order. The projection that
 * keeps the merged flags and the queries that explain them share it.
 */
export function sampleMergeRule(type: string, priorities?: SourcePriorities): MergeRule {
  const t = findQuantityType(type);
  const rule: MatchRule = t?.match ?? 'other';
  return {
    rule,
    order: sourceOrderFor(type, t?.group ?? 'other', priorities),
    reachMs: matchReachMs(rule),
    lookbackMs: rule === 'count' || rule === 'other' ? LONGEST_COUNT_INTERVAL_MS : 0,
  };
}
