import { sampleMergeRule } from '../../../src/merge/sampleMergeRule.js';
import type { Change } from '../../../src/readstore/readStore.js';
import type { MergedKind } from '../mergedView/mergedFlags.js';
import { utcDayOf } from '../recordDoc.js';
import { rollupDay, SAMPLE_ROLLUPS, type RollupSample } from './dayRollup.js';
import { blockSession } from '../sampleBlocks/blockSession.js';

const DAY_MS = 86_400_000;

/** The samples evolve upserts: never stored, packed into blocks by the derivation (Derivation.folds). */
export const SAMPLES = 'samples';
/** The user's source order as the samples projection last saw it (`source_priorities.set`). */
export const SAMPLE_SOURCE_ORDERS = 'sample_source_orders';

/**
 * Samples in the merged view (mergedFlags.ts), and with the flags the statistics rollups of every
 * re-evaluated day: its rows are replaced by the ones its samples give (dayRollup.ts).
 */
export const samplesKind: MergedKind = {
  collection: SAMPLES,
  partitionField: 'type',
  startField: 'start_date',
  endField: 'end_date',
  rule: (type, priorities) => sampleMergeRule(type, priorities),
  ordersCollection: SAMPLE_SOURCE_ORDERS,
  extraFields: ['value', 'unit', 'ingested_at'],
  session: (readStore, kind, replay, batch) => blockSession(readStore, kind.collection, replay, batch),
  onDays: (owner, days, members, out) => {
    const byDay = new Map<number, RollupSample[]>();
    let tenantId = '';
    for (const m of members) {
      const day = Math.floor(m.start / DAY_MS);
      let list = byDay.get(day);
      if (!list) byDay.set(day, (list = []));
      list.push({ startMs: m.start, value: m.row.value as number, provider: m.provider, source: m.source, unit: m.row.unit as string, ingested_at: m.row.ingested_at as string, hidden: m.hidden, excluded: m.excluded });
      tenantId = m.row.tenant_id as string;
    }
    out.push({ op: 'deleteMany', collection: SAMPLE_ROLLUPS, filter: { user_id: owner.userId, type: owner.partition, day: { $gte: days[0]!, $lte: days[days.length - 1]! } } });
    for (const [day, samples] of byDay) {
      for (const doc of rollupDay({ user_id: owner.userId, tenant_id: tenantId, type: owner.partition, day: utcDayOf(day * DAY_MS) }, samples)) out.push({ op: 'put', collection: SAMPLE_ROLLUPS, doc } satisfies Change);
    }
  },
};
