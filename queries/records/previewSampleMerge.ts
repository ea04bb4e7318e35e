import { boundedInterval, unlistedByMergedView } from '../../src/merge/matchRules.js';
import { sampleMergeRule } from '../../src/merge/sampleMergeRule.js';
import type { SourcePriorities } from '../../src/merge/sourceRanking.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { readSamples } from './sampleBlocks.js';

/** A preview reads the window's samples and every sample that can match them; above this it asks for a narrower window. */
export const PREVIEW_MAX_ROWS = 20_000;

export type PreviewRecord = {
  id: number;
  start_date: string;
  end_date: string;
  value: number;
  unit: string;
  provider: string;
  source: string | null;
  /** In the merged view as it is now (under the saved order). */
  shown_now: boolean;
  /** In the merged view under the order previewed. */
  shown: boolean;
};

export type MergePreview = { order: readonly string[]; records: PreviewRecord[] } | { tooMany: true };

/**
 * Which samples of one type and window the merged view would show under an order not saved yet
 * (the console's source-order preview): the same match rule, ranking and decision the samples
 * projection applies (src/merge), over the stored samples and their neighbours, decided here
 * without writing anything.
 */
export async function previewSampleMerge(readStore: ReadStore, q: { userId: string; type: string; start: number; end: number; priorities: SourcePriorities }): Promise<MergePreview> {
  const rule = sampleMergeRule(q.type, q.priorities);
  const lo = q.start - rule.reachMs - rule.lookbackMs;
  const hi = q.end + rule.reachMs + rule.lookbackMs;
  const rows = await readSamples(readStore, { userId: q.userId, type: q.type, start: new Date(lo).toISOString(), end: new Date(hi).toISOString() }, PREVIEW_MAX_ROWS + 1);
  if (rows.length > PREVIEW_MAX_ROWS) return { tooMany: true };
  const all = rows.map((r) => ({
    key: r._id,
    ...boundedInterval(Date.parse(r.start_date), Date.parse(r.end_date), rule.maxSpanMs),
    source: r.source,
    body_worn: r.body_worn === true,
    provider: r.provider,
    excluded: r.excluded === true,
    row: r,
  }));
  const members = all.filter((m) => m.start >= q.start && m.start < q.end);
  const hidden = unlistedByMergedView(members, all, rule.rule, rule.order, rule.lookbackMs);
  return {
    order: rule.order,
    records: members.map(({ key, row }) => ({
      id: row.id,
      start_date: row.start_date,
      end_date: row.end_date,
      value: row.value,
      unit: row.unit,
      provider: row.provider,
      source: row.source ?? null,
      shown_now: row.hidden !== true,
      shown: !hidden.has(key),
    })),
  };
}
