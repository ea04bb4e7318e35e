import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { QuantityRecord } from '../../../../commands/ingestion/records.js';
import { derivationCounts } from '../../../../projections/records/mergedView/batchSpans.js';
import { samplesProjection } from '../../../../projections/records/samplesProjection.js';
import { SAMPLE_ROLLUPS } from '../../../../projections/records/sampleRollups/dayRollup.js';
import type { RecordedEvent } from '../../../../src/eventstore/eventStore.js';
import type { SourcePriorities } from '../../../../src/merge/sourceRanking.js';
import type { Projection } from '../../../../src/projector/projection.js';
import type { ReadStore } from '../../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../../../support/tmp.js';
import { drawnQuantity, ingested, project, rebuildInto, storedSamples, userEventAt } from '../harness.js';
import { logicalState } from './blockStoreHarness.js';
import { perSampleProjection } from './perSampleModel.js';

/**
 * A live batch re-evaluates only the spans its records can change (batchSpans.ts; docs/sample-blocks.md,
 * "What a batch re-evaluates"): the flags of the rows a record of another stream can match, and the
 * rollups of the quarter hours those rows and the batch's records (where they stand and stood) lie
 * in, the rest kept as stored. Checked in the live shape, many small events into the same days
 * over a dense base, against the per-sample model, which re-evaluates whole days; and rebuilt equals live.
 */
const STREAMS = [
  { provider: 'device-a', source: 'apple', body_worn: true, device: 'Apple Watch (Watch7,1)' },
  { provider: 'device-a', source: 'apple', body_worn: false, device: null },
  { provider: 'device-b', source: 'garmin', body_worn: true, device: 'Forerunner 965' },
  { provider: 'device-b', source: 'samsung', body_worn: false, device: null },
] as const;
const TYPES = ['heart_rate', 'step_count'] as const;
const BASE = Date.parse('2026-03-27T00:00:00Z');
const MIN = 60_000;
const DAYS = 2;

type Raw = { key: string; stream: number; type: (typeof TYPES)[number]; start: number; minutes: number; value: number };

const rawArb = fc.record({
  stream: fc.integer({ min: 0, max: STREAMS.length - 1 }),
  type: fc.constantFrom(...TYPES),
  start: fc.oneof(fc.integer({ min: 0, max: (DAYS * 24 * 60) / 5 - 1 }).map((i) => BASE + i * 5 * MIN), fc.integer({ min: 0, max: DAYS * 24 * 60 - 1 }).map((i) => BASE + i * MIN + 30_123)),
  minutes: fc.constantFrom(0, 0, 1, 5, 240, 2160),
  // Heart rates under 20 are implausible: flagged and left out (contracts §15). Fractions make the sums' order matter.
  value: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0.5, max: 150, noNaN: true })),
});
const prioritiesArb: fc.Arbitrary<SourcePriorities> = fc.dictionary(fc.constantFrom('heart_rate', 'activity', '*'), fc.shuffledSubarray(['apple', 'garmin', 'samsung'], { minLength: 1 }), { maxKeys: 2 });

const record = (r: Raw): QuantityRecord => drawnQuantity(r, { ...STREAMS[r.stream]!, metadata: {}, source_name: null });

let position = 0;
/** One event per record group, as a paced ETL hands the live projector one small event at a time; ingestion times not in log order. */
const small = (raws: readonly Raw[], ingestedAt: string): RecordedEvent =>
  ingested('quantity', ++position, raws.map(record), { provider: STREAMS[raws[0]!.stream]!.provider, ingested_at: ingestedAt });

/** A dense base: every stream’s heart rate and steps every 30 minutes over the days. */
function base(): Raw[] {
  const out: Raw[] = [];
  for (let s = 0; s < STREAMS.length; s++) {
    for (let i = 0; i < (DAYS * 24 * 60) / 30; i++) {
      out.push({ key: `b${s}-hr${i}`, stream: s, type: 'heart_rate', start: BASE + i * 30 * MIN + s * 2 * MIN, minutes: 0, value: 50 + ((i * 7 + s) % 90) });
      if (s % 2 === 0) out.push({ key: `b${s}-st${i}`, stream: s, type: 'step_count', start: BASE + i * 30 * MIN, minutes: 30, value: (i * 13 + s) % 40 });
    }
  }
  return out;
}

async function storeFor(p: Projection): Promise<ReadStore> {
  const store = new SqliteReadStore({ path: join(tempDir('wellstream-spans-'), 'read.db') });
  await store.ensureCollections(p.collections);
  return store;
}
const all = (store: ReadStore, collection: string) => store.find(collection, { sort: [['_id', 1]] });

describe('a batch re-evaluates only the spans it changed (issue 38; spec "Merged view", "Sample statistics")', () => {
  it('many small events into the same days, with other sources, priorities, quality flags, records sent again and a provider erased, equal whole days re-evaluated; rebuilt equals live', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(rawArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 14 }),
        fc.array(fc.array(rawArb, { minLength: 1, maxLength: 3 }), { maxLength: 6 }),
        prioritiesArb,
        fc.array(fc.nat(), { maxLength: 6 }),
        async (batches, afterErasure, priorities, resend) => {
          let n = 0;
          // One stream per event (an ETL job appends one provider's records).
          const keyed = (rs: Omit<Raw, 'key'>[]): Raw[] => rs.map((r) => ({ ...r, stream: rs[0]!.stream, key: `r${n++}` }));
          const blocks = await storeFor(samplesProjection);
          const rows = await storeFor(perSampleProjection);
          const log: RecordedEvent[] = [];
          const apply = async (es: RecordedEvent[]) => {
            log.push(...es);
            await project(blocks, samplesProjection, es);
            await project(rows, perSampleProjection, es);
          };
          const expectSame = async (when: string) => {
            expect(await storedSamples(blocks), `${when}: samples`).toEqual(await all(rows, 'samples'));
            expect(await all(blocks, SAMPLE_ROLLUPS), `${when}: rollups`).toEqual(await all(rows, SAMPLE_ROLLUPS));
          };
          const dense = base();
          for (let s = 0; s < STREAMS.length; s++) await apply([small(dense.filter((r) => r.stream === s), '2026-11-01T00:00:00.000Z')]);
          await apply([userEventAt(++position, 'source_priorities.set', { priorities, at: '2026-11-04T00:00:00.000Z', by: 'test' })]);
          const sent: Raw[] = [];
          for (const [i, b] of batches.entries()) {
            const raws = keyed(b);
            sent.push(...raws);
            await apply([small(raws, `2026-11-0${1 + (i % 5)}T0${i % 10}:00:00.000Z`)]);
          }
          await expectSame('small events');
          // Sent again by their own stream, moved by minutes or to the other day, revalued: one event each.
          for (const [j, i] of resend.entries()) {
            const r = sent.length ? sent[i % sent.length]! : dense[i % dense.length]!;
            await apply([small([{ ...r, start: r.start + [5 * MIN, -7 * MIN, 24 * 60 * MIN, 37 * MIN][j % 4]!, value: r.value + 1.5 }], '2026-11-06T00:00:00.000Z')]);
          }
          await expectSame('sent again');
          await apply([userEventAt(++position, 'provider_data.erased', { provider: 'device-b', job_id: 'job-1', erased_at: '2026-11-05T00:00:00.000Z' })]);
          for (const b of afterErasure) await apply([small(keyed(b), '2026-11-07T00:00:00.000Z')]);
          await expectSame('device-b erased, then more small events');
          const fresh = await storeFor(samplesProjection);
          await rebuildInto(fresh, samplesProjection, log);
          for (const c of samplesProjection.collections) expect(await logicalState(fresh, c.name), `rebuilt ${c.name}`).toEqual(await logicalState(blocks, c.name));
          await Promise.all([fresh.close(), blocks.close(), rows.close()]);
        },
      ),
      { numRuns: 10 },
    );
  }, 300_000);

  it('a small event into a dense day of two sources decides and adds up again only the rows around it, not the day', async () => {
    const store = await storeFor(samplesProjection);
    const dense = base();
    for (let s = 0; s < STREAMS.length; s++) await project(store, samplesProjection, [small(dense.filter((r) => r.stream === s), '2026-11-01T00:00:00.000Z')]);
    // Two heart rates of one source and one of another, within a minute at noon of the first day.
    const noon = BASE + 12 * 60 * MIN;
    const before = { ...derivationCounts };
    await project(store, samplesProjection, [small([{ key: 'x1', stream: 0, type: 'heart_rate', start: noon, minutes: 0, value: 70 }, { key: 'x2', stream: 0, type: 'heart_rate', start: noon + 30_000, minutes: 0, value: 71 }], '2026-11-02T00:00:00.000Z')]);
    await project(store, samplesProjection, [small([{ key: 'x3', stream: 2, type: 'heart_rate', start: noon, minutes: 0, value: 72 }], '2026-11-02T00:00:00.000Z')]);
    // The flags of the rows within 5 minutes of them (readings match within 5 minutes) and of their
    // quarter hours: a few dozen, where a whole day of the four streams is 576 heart rates.
    expect(derivationCounts.decided - before.decided).toBeLessThan(40);
    expect(derivationCounts.rolled - before.rolled).toBeLessThan(40);
    expect(derivationCounts.built - before.built).toBeLessThan(80);
    await store.close();
  }, 60_000);
});
