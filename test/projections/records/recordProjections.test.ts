import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { categorySamplesProjection, type CategorySampleDoc } from '../../../projections/records/categorySamplesProjection.js';
import { dailySummariesProjection, type DailySummaryDoc } from '../../../projections/records/dailySummariesProjection.js';
import { ecgProjection, type EcgRecordingDoc, type EcgVoltagesDoc } from '../../../projections/records/ecgProjection.js';
import { menstrualCyclesProjection, type MenstrualCycleDoc } from '../../../projections/records/menstrualCyclesProjection.js';
import { nutritionProjection, type NutritionDoc } from '../../../projections/records/nutritionProjection.js';
import { observationsProjection, type ObservationDoc } from '../../../projections/records/observationsProjection.js';
import { recordId, recordKey } from '../../../projections/records/recordIds.js';
import type { NormalizedRecord, RecordKind } from '../../../commands/ingestion/records.js';
import type { Projection } from '../../../src/projector/projection.js';
import { category, cycle, daily, ecg, nutrition, observation } from './fixtures.js';
import { ingested, INGESTED_AT, projectionHarness, PROVIDER, TENANT, USER } from './harness.js';

type Case = {
  name: string;
  projection: Projection;
  collection: string;
  kind: RecordKind;
  make: (o?: Record<string, unknown>) => NormalizedRecord;
  /** A field changed on re-send, and its new value. */
  change: [string, unknown];
  day: string;
};

const cases: Case[] = [
  { name: 'category samples', projection: categorySamplesProjection, collection: 'category_samples', kind: 'category', make: (o) => category(o), change: ['value', 'asleep_rem'], day: '2026-11-01' },
  { name: 'nutrition', projection: nutritionProjection, collection: 'nutrition', kind: 'nutrition', make: (o) => nutrition(o), change: ['energy_kcal', 700], day: '2026-11-01' },
  { name: 'daily summaries', projection: dailySummariesProjection, collection: 'daily_summaries', kind: 'daily_summary', make: (o) => daily(o), change: ['steps', 12_000], day: '2026-11-01' },
  { name: 'ECG recordings', projection: ecgProjection, collection: 'ecg_recordings', kind: 'ecg', make: (o) => ecg(o), change: ['classification', 'atrialFibrillation'], day: '2026-11-01' },
  { name: 'menstrual cycles', projection: menstrualCyclesProjection, collection: 'menstrual_cycles', kind: 'menstrual_cycle', make: (o) => cycle(o), change: ['cycle_length_days', 29], day: '2026-10-03' },
  { name: 'observations', projection: observationsProjection, collection: 'observations', kind: 'observation', make: (o) => observation(o), change: ['loinc_code', '55284-4'], day: '2026-11-01' },
];

describe.each(cases)('$name projection (natural-key upsert, deterministic ids)', (c) => {
  let h: Awaited<ReturnType<typeof projectionHarness>>;
  beforeAll(async () => {
    h = await projectionHarness(c.projection);
  });
  afterAll(async () => {
    await h.close();
  });

  it('stores each record under recordKey(user, provider, external_id) with id = position × 10000 + index, owner fields and day', async () => {
    const first = c.make();
    const second = c.make({ external_id: `${first.external_id}-b` });
    await h.apply(ingested(c.kind, 5, [first, second]));
    // Keys are hashes: order the rows by their integer id, not by key.
    const docs = (await h.all<{ _id: string; id: number; day: string; user_id: string; tenant_id: string; ingested_at: string }>(c.collection)).sort((a, b) => a.id - b.id);
    expect(docs.map((d) => [d._id, d.id])).toEqual([
      [recordKey(USER, PROVIDER, first.external_id), recordId(5, 0)],
      [recordKey(USER, PROVIDER, `${first.external_id}-b`), recordId(5, 1)],
    ]);
    expect(docs[0]).toMatchObject({ user_id: USER, tenant_id: TENANT, ingested_at: INGESTED_AT, day: c.day });
    expect(docs[0]).not.toHaveProperty('kind');
  });

  it('a re-sent record (same external_id) updates in place and keeps its first id', async () => {
    const [field, value] = c.change;
    await h.apply(ingested(c.kind, 8, [c.make({ [field]: value })], { ingested_at: '2026-11-03T00:00:00.000Z' }));
    const docs = (await h.all<Record<string, unknown> & { _id: string; id: number }>(c.collection)).sort((a, b) => a.id - b.id);
    expect(docs).toHaveLength(2);
    expect(docs[0]).toMatchObject({ id: recordId(5, 0), [field]: value, ingested_at: '2026-11-03T00:00:00.000Z' });
  });

  it('evolve is pure: the same event gives the same changes', () => {
    const e = ingested(c.kind, 3, [c.make()]);
    expect(c.projection.evolve(e, 1)).toEqual(c.projection.evolve(e, 1));
  });
});

describe('kind-specific fields', () => {
  it('category: keeps the canonical type and value and the provider metadata', async () => {
    const h = await projectionHarness(categorySamplesProjection);
    await h.apply(ingested('category', 1, [category({ type: 'mindful_session', value: 'not_applicable' })]));
    expect((await h.all<CategorySampleDoc>('category_samples'))[0]).toMatchObject({ type: 'mindful_session', value: 'not_applicable', metadata: { HKTimeZone: 'Europe/Berlin' } });
    await h.close();
  });

  it('daily: day is the summary date and day_start its midnight UTC (the merged view treats it as [date, +24 h))', async () => {
    const h = await projectionHarness(dailySummariesProjection);
    await h.apply(ingested('daily_summary', 1, [daily({ date: '2026-12-31' })]));
    expect((await h.all<DailySummaryDoc>('daily_summaries'))[0]).toMatchObject({ date: '2026-12-31', day: '2026-12-31', day_start: '2026-12-31T00:00:00.000Z' });
    await h.close();
  });

  it('ECG: the recording row holds no voltages; they live in ecg_voltages under the recording key, replaced on re-send (Reads rule 4)', async () => {
    const h = await projectionHarness(ecgProjection);
    await h.apply(ingested('ecg', 1, [ecg()]));
    const [rec] = await h.all<EcgRecordingDoc>('ecg_recordings');
    expect(rec).not.toHaveProperty('voltages');
    expect(rec).toMatchObject({ number_of_measurements: 4, sampling_frequency_hz: 512 });
    await h.apply(ingested('ecg', 2, [ecg({ voltages: [1, 2], number_of_measurements: 2 })]));
    const v = await h.all<EcgVoltagesDoc>('ecg_voltages');
    expect(v).toEqual([expect.objectContaining({ _id: recordKey(USER, PROVIDER, 'ecg-1'), recording_key: recordKey(USER, PROVIDER, 'ecg-1'), voltages: [1, 2], user_id: USER })]);
    await h.close();
  });

  it('nutrition: keeps the named nutrients and the other nutrients map', async () => {
    const h = await projectionHarness(nutritionProjection);
    await h.apply(ingested('nutrition', 1, [nutrition()]));
    expect((await h.all<NutritionDoc>('nutrition'))[0]).toMatchObject({ protein_g: 22, nutrients: { iron: { value: 4.1, unit: 'mg' } }, source: 'myfitnesspal' });
    await h.close();
  });

  it('menstrual cycles and observations keep their own fields', async () => {
    const m = await projectionHarness(menstrualCyclesProjection);
    await m.apply(ingested('menstrual_cycle', 1, [cycle()]));
    expect((await m.all<MenstrualCycleDoc>('menstrual_cycles'))[0]).toMatchObject({ start_date: '2026-10-03', flow: { '2026-10-04': 'heavy' } });
    await m.close();
    const o = await projectionHarness(observationsProjection);
    await o.apply(ingested('observation', 1, [observation()]));
    expect((await o.all<ObservationDoc>('observations'))[0]!.components).toHaveLength(2);
    await o.close();
  });
});
