import { z } from 'zod';
import { listSamples } from '../../queries/records/listSamples.js';
import type { Window } from '../../queries/records/window.js';
import type { UserDoc } from '../../projections/users/usersProjection.js';
import { findQuantityType } from '../catalog/quantityCatalog.js';
import { sampleMergeRule } from '../merge/sampleMergeRule.js';
import { compareStreams, type Stream } from '../merge/sourceRanking.js';
import type { ReadStore, Scalar } from '../readstore/readStore.js';

/**
 * `type` like every other tool (issue 23); `metric`, this tool's first name for it, is accepted
 * for one release (docs/mcp.md). Both optional in the schema, so that either passes it; the
 * tool refuses a call with neither, or with two that differ (`explainSourcesType`).
 */
export const ExplainSourcesArgs = z.object({
  type: z.string().min(1).optional().describe('Quantity type from list_quantity_types (e.g. heart_rate). Required.'),
  metric: z.string().min(1).optional().describe('Deprecated alias of type, accepted for one release; pass type.'),
});

/** The type an explain_sources call asks about, or the reason it cannot be answered. */
export function explainSourcesType(args: z.output<typeof ExplainSourcesArgs>): { type: string } | { refusal: string } {
  if (args.type !== undefined && args.metric !== undefined && args.type !== args.metric) return { refusal: 'type and metric (its deprecated alias) differ: pass type only' };
  const type = args.type ?? args.metric;
  return type === undefined ? { refusal: 'type is required (a quantity type from list_quantity_types)' } : { type };
}

/** Rows an explanation reads at most; beyond it the counts say `counted_up_to`. */
export const EXPLAIN_MAX_ROWS = 50_000;

export type SourceExplanation = Stream & {
  rank: number;
  records: number;
  shown_in_merged_view: number;
  /** Why this stream ranks where it does against the one before it (null for the first). */
  ranked_after_previous_by: string | null;
};

/**
 * explain_sources (beyond the spec's table): the sources that recorded a metric in a window, how
 * the merged view ranks them and which rule decided each step of the ranking. Counts come from the
 * stored merged flags, so they say what the merged view shows, not what the ranking predicts.
 */
export async function explainSources(readStore: ReadStore, user: UserDoc, metric: string, window: Window) {
  const userId = user.id;
  const priorities = user.source_priorities ?? {};
  const t = findQuantityType(metric);
  const group = t?.group ?? 'other';
  const { order } = sampleMergeRule(metric, priorities);
  const orderFrom = priorities[metric] ? `your order for ${metric}` : priorities[group] ? `your order for the ${group} group` : priorities['*'] ? 'your order for *' : `the built-in order for the ${group} group`;

  const streams = new Map<string, Stream & { records: number; shown: number }>();
  let after: Scalar[] | null = null;
  let read = 0;
  let complete = true;
  for (;;) {
    const page = await listSamples(readStore, { userId, type: metric, window, view: 'all' }, { after, limit: 1000 });
    for (const r of page.items) {
      const key = `${r.source}\u0000${r.body_worn ? 1 : 0}\u0000${r.provider}`;
      const s = streams.get(key) ?? { source: r.source, body_worn: r.body_worn === true, provider: r.provider, records: 0, shown: 0 };
      s.records += 1;
      if (r.primary) s.shown += 1;
      streams.set(key, s);
    }
    read += page.items.length;
    if (!page.next) break;
    if (read >= EXPLAIN_MAX_ROWS) {
      complete = false;
      break;
    }
    after = page.next;
  }

  const ranked = [...streams.values()].sort((a, b) => compareStreams(a, b, order));
  return ranked.map((s, i): SourceExplanation => ({
    source: s.source,
    body_worn: s.body_worn,
    provider: s.provider,
    rank: i + 1,
    records: s.records,
    shown_in_merged_view: s.shown,
    ranked_after_previous_by: i === 0 ? null : reason(ranked[i - 1]!, s, order, orderFrom),
    ...(complete ? {} : { counted_up_to: EXPLAIN_MAX_ROWS }),
  }));
}

function reason(before: Stream, s: Stream, order: readonly string[], orderFrom: string): string {
  if (before.source !== s.source) {
    if (order.includes(before.source) && order.includes(s.source)) return `source order: ${orderFrom}`;
    if (order.includes(before.source)) return `source order: ${s.source} is not listed in ${orderFrom}`;
    return 'source name, alphabetically (neither source is listed in the order)';
  }
  if (before.body_worn !== s.body_worn) return 'body-worn device ranks first within a source';
  return 'provider tie: provider name, alphabetically';
}
