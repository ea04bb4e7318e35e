import { sampleMergeRule } from '../../../src/merge/sampleMergeRule.js';
import type { Change } from '../../../src/readstore/readStore.js';
import type { MergedKind } from '../mergedView/mergedFlags.js';
import { utcDayOf } from '../recordDoc.js';
import { rollupDay, type RollupDoc, rollupQuarters, SAMPLE_ROLLUPS, type RollupSample } from './dayRollup.js';
import { QUARTER_MS } from './rollupLayout.js';
import { derivationCounts } from '../mergedView/batchSpans.js';
import { instantMs } from '../../../src/shared/isoInstant.js';
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
    derivationCounts.rolled += members.length;
    out.push({ op: 'deleteMany', collection: SAMPLE_ROLLUPS, filter: { user_id: owner.userId, type: owner.partition, day: { $gte: days[0]!, $lte: days[days.length - 1]! } } });
    for (const [day, samples] of byDay) {
      for (const doc of rollupDay({ user_id: owner.userId, tenant_id: tenantId, type: owner.partition, day: utcDayOf(day * DAY_MS) }, samples)) out.push({ op: 'put', collection: SAMPLE_ROLLUPS, doc } satisfies Change);
    }
  },
  // A batch's day: its changed quarters added up again, the others read from the stored rows (rollupQuarters).
  onQuarters: async (readStore, owner, day, affected, rows, decided, out) => {
    const samples: RollupSample[] = [];
    const dayStart = Date.parse(`${day}T00:00:00Z`);
    let tenantId = '';
    for (const r of rows) {
      const startMs = instantMs(r.start_date as string);
      if (affected[Math.floor((startMs - dayStart) / QUARTER_MS)] === 1) derivationCounts.rolled++;
      samples.push({ startMs, value: r.value as number, provider: r.provider as string, source: r.source as string, unit: r.unit as string, ingested_at: r.ingested_at as string, hidden: decided.get(r._id) ?? r.hidden === true, excluded: r.excluded === true });
      tenantId = r.tenant_id as string;
    }
    const filter = { user_id: owner.userId, type: owner.partition, day };
    const owned = { user_id: owner.userId, tenant_id: tenantId, type: owner.partition, day };
    const docs = rollupQuarters(owned, samples, affected, await readStore.find<RollupDoc>(SAMPLE_ROLLUPS, { filter })) ?? rollupDay(owned, samples);
    out.push({ op: 'deleteMany', collection: SAMPLE_ROLLUPS, filter });
    for (const doc of docs) out.push({ op: 'put', collection: SAMPLE_ROLLUPS, doc } satisfies Change);
  },
};
