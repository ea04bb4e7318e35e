import { idRowId, idRowPut, setFamily } from '../../projections/records/sampleBlocks/packedLocators.js';
import { BLOCK_SAMPLES, bySampleStart, encodeBlock, listedCount, SAMPLE_BLOCKS, SAMPLE_KEYS, type SampleBlockDoc, userTag } from '../../projections/records/sampleBlocks/sampleBlock.js';
import { samplesProjection, type SampleDoc } from '../../projections/records/samplesProjection.js';
import { SAMPLES } from '../../projections/records/sampleRollups/samplesDerivation.js';
import { mergedFilter, type View } from '../../queries/records/view.js';
import { windowFilter, type Window } from '../../queries/records/window.js';
import type { Change, CollectionSpec, Doc } from '../../src/readstore/readStore.js';
import { perSampleProjection } from '../projections/records/sampleBlocks/perSampleModel.js';

/**
 * The same samples in both models, for reads from blocks to be checked (and timed) against the
 * per-sample model as it was before issue 38 (its collection as the per-sample projection kept as
 * the write side's oracle declares it), and the blocks' collections as the samples projection declares them.
 */
export const ROWS = SAMPLES;
export const ROWS_SPEC: CollectionSpec = perSampleProjection.collections.find((c) => c.name === SAMPLES)!;
export const BLOCK_SPECS: CollectionSpec[] = samplesProjection.collections.filter((c) => c.name === SAMPLE_BLOCKS || c.name === SAMPLE_KEYS);

/**
 * The samples as blocks: per (user, type, provider, source, day), in start order, cut at the
 * given sizes; a sample picked by `resent` goes to a block of its own key after the others (a
 * re-sent record that left its block), so blocks of one key overlap.
 */
export function blocksOf(samples: readonly SampleDoc[], cuts: readonly number[], resent: ReadonlySet<number>): { blocks: SampleBlockDoc[]; locators: Change[] } {
  const groups = new Map<string, SampleDoc[][]>();
  samples.forEach((s, i) => {
    const g = `${s.user_id}|${s.type}|${s.provider}|${s.source}|${s.day}`;
    const lists = groups.get(g) ?? [[], []];
    lists[resent.has(i) ? 1 : 0]!.push(s);
    groups.set(g, lists);
  });
  const blocks: SampleBlockDoc[] = [];
  // The id rows a read by id needs (packedLocators.ts): each block is a family of its own, `<g>|<n>` (its `_id` without `.0`).
  const idRows = new Map<string, { provider: string; data: Parameters<typeof setFamily>[0] }>();
  let cut = 0;
  for (const [g, lists] of groups) {
    for (const list of lists) {
      list.sort(bySampleStart);
      for (let at = 0; at < list.length; ) {
        const size = Math.max(1, cuts[cut++ % cuts.length]!);
        const members = list.slice(at, at + size);
        at += size;
        const first = members[0]!;
        const block: SampleBlockDoc = {
          _id: `${g}|${blocks.length}.0`,
          user_id: first.user_id,
          tenant_id: first.tenant_id,
          type: first.type,
          provider: first.provider,
          source: first.source,
          day: first.day,
          start_min: first.start_date,
          start_max: members[members.length - 1]!.start_date,
          count: members.length,
          listed: listedCount(members),
          data: encodeBlock(members),
        };
        blocks.push(block);
        for (const s of members) {
          const rowId = idRowId(userTag(s.user_id), s.provider, s.id);
          let row = idRows.get(rowId);
          if (!row) idRows.set(rowId, (row = { provider: s.provider, data: { f: [], o: 0, x: [] } }));
          setFamily(row.data, s.id, block._id.slice(0, -2));
        }
      }
    }
  }
  return { blocks, locators: [...idRows].map(([id, row]) => idRowPut(id, row.provider, row.data)) };
}

/** Today's query of the per-sample rows (queries/records/listSamples.ts before blocks). */
export const rowsQuery = (userId: string, type: string, window: Window, view: View) => ({
  filter: { user_id: userId, type, ...windowFilter('start_date', window), ...mergedFilter(view) },
  sort: [['start_date', 1], ['id', 1]] as const,
});


/** The changes that store `samples` as blocks (blocksOf; by default cut as the projection cuts them) with their locators. */
export function blockChanges(samples: readonly SampleDoc[], cuts: readonly number[] = [BLOCK_SAMPLES], resent: ReadonlySet<number> = new Set()): Change[] {
  const { blocks, locators } = blocksOf(samples, cuts, resent);
  return [...blocks.map((doc): Change => ({ op: 'put', collection: SAMPLE_BLOCKS, doc })), ...locators];
}

/** The changes that store `samples` in both models: rows in ROWS, and blocks (blockChanges). */
export function bothModels(samples: readonly SampleDoc[], cuts: readonly number[], resent: ReadonlySet<number> = new Set()): Change[] {
  return [...samples.map((doc): Change => ({ op: 'put', collection: ROWS, doc: structuredClone(doc) as Doc })), ...blockChanges(samples, cuts, resent)];
}
