import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeBlock, SAMPLE_BLOCKS, SAMPLE_KEYS, type SampleBlockDoc } from '../../../../projections/records/sampleBlocks/sampleBlock.js';
import { samplesProjection } from '../../../../projections/records/samplesProjection.js';
import { SAMPLE_ROLLUPS } from '../../../../projections/records/sampleRollups/dayRollup.js';
import { SqliteEventStore } from '../../../../src/eventstore/sqliteEventStore.js';
import type { Projection } from '../../../../src/projector/projection.js';
import { ProjectorRuntime } from '../../../../src/projector/projectorRuntime.js';
import type { ReadStore } from '../../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../../src/readstore/sqliteReadStore.js';
import { quantity } from '../../../server/records/pipelineFixtures.js';
import { tempDir } from '../../../support/tmp.js';
import { ingested, storedSamples, TENANT, USER } from '../harness.js';
import { logicalState } from './blockStoreHarness.js';
import { perSampleProjection } from './perSampleModel.js';

/**
 * Issue 38, samples as blocks through the real projector: the live runners' batches and
 * `projections rebuild` (src/projector/rebuild.ts, which runs the folding derivation on every
 * chunk of its replay) store the same blocks; and a read store of the version before (one row per
 * sample, rollups of version 3) is rebuilt from the log on first start, its `samples` table gone
 * (README, "Upgrading"; docs/sample-blocks.md "Migration").
 */
let events: SqliteEventStore;
beforeEach(() => {
  events = new SqliteEventStore({ path: ':memory:' });
});
afterEach(async () => {
  await events.close();
});

/** Two providers' heart rate and steps over three days, some sent again moved, a source order, one provider erased, and more after it. */
async function seed(): Promise<void> {
  let position = 0;
  const append = async (type: string, data: Record<string, unknown>, stream: string) => events.appendToStream(stream, [{ type, data }]);
  const upload = async (provider: string, from: number, count: number, shift = 0) => {
    const records = Array.from({ length: count }, (_, k) => {
      const i = from + k;
      const start = new Date(Date.parse('2026-03-28T00:00:00Z') + i * 300_000 + shift + (provider === 'device-b' ? 120_000 : 0)).toISOString();
      return quantity({ external_id: `${provider}-${i}`, type: i % 3 ? 'heart_rate' : 'step_count', unit: i % 3 ? 'count/min' : 'count', value: 40 + (i % 90), start_date: start, end_date: start, provider, source: provider === 'device-a' ? 'apple' : 'garmin' });
    });
    const e = ingested('quantity', ++position, records, { provider, ingested_at: '2026-11-06T00:00:00.000Z' });
    await append(e.type, e.data, `ingest-${USER}-${provider}`);
  };
  for (let from = 0; from < 900; from += 300) await upload('device-a', from, 300);
  await upload('device-b', 0, 800);
  await append('source_priorities.set', { user_id: USER, tenant_id: TENANT, priorities: { heart_rate: ['garmin', 'apple'] }, at: '2026-11-06T00:00:00.000Z', by: 'test' }, `user-${USER}`);
  await upload('device-a', 100, 50, 60_000);
  await append('provider_data.erased', { user_id: USER, tenant_id: TENANT, provider: 'device-b', job_id: 'job-1', erased_at: '2026-11-06T00:00:00.000Z' }, `user-${USER}`);
  await upload('device-b', 0, 100);
}

async function runLive(store: ReadStore, projection: Projection): Promise<void> {
  const runtime = new ProjectorRuntime(events, store, [projection], undefined, { maxChangesPerBatch: 500 });
  await runtime.start();
  await runtime.waitForIdle(await events.headPosition(), 30_000);
  await runtime.stop();
}

const all = (store: ReadStore, collection: string) => store.find(collection, { sort: [['_id', 1]] });

describe('samples as blocks through the projector (issue 38)', () => {
  it('projections rebuild stores exactly the blocks, locators and rollups the live runner stored, which equal the per-sample model', async () => {
    await seed();
    const live = new SqliteReadStore({ path: join(tempDir('wellstream-blocks-live-'), 'read.sqlite') });
    await runLive(live, samplesProjection);
    expect(await live.count(SAMPLE_BLOCKS)).toBeGreaterThan(0);
    const oracle = new SqliteReadStore({ path: join(tempDir('wellstream-blocks-oracle-'), 'read.sqlite') });
    await runLive(oracle, perSampleProjection);
    expect(await storedSamples(live)).toEqual(await all(oracle, 'samples'));
    expect(await all(live, SAMPLE_ROLLUPS)).toEqual(await all(oracle, SAMPLE_ROLLUPS));

    const rebuilt = new SqliteReadStore({ path: join(tempDir('wellstream-blocks-rebuilt-'), 'read.sqlite') });
    const [done] = await new ProjectorRuntime(events, rebuilt, [samplesProjection]).rebuild(undefined);
    expect(done!.position).toBe(await events.headPosition());
    // The locators as one set: the live store's recent tier and main together (logicalState).
    for (const c of samplesProjection.collections) expect(await logicalState(rebuilt, c.name), c.name).toEqual(await logicalState(live, c.name));
    await Promise.all([live.close(), oracle.close(), rebuilt.close()]);
  });

  it('a read store of the version before (a row per sample) is rebuilt into blocks on first start, its samples table dropped', async () => {
    await seed();
    const path = join(tempDir('wellstream-blocks-upgrade-'), 'read.sqlite');
    const old = new SqliteReadStore({ path });
    // The version before: the per-sample projection, its rollups declared as version 3.
    const before: Projection = { ...perSampleProjection, collections: perSampleProjection.collections.map((c) => (c.name === SAMPLE_ROLLUPS ? { ...c, version: 3 } : c)) };
    await runLive(old, before);
    const oldSamples = await all(old, 'samples');
    const oldRollups = await all(old, SAMPLE_ROLLUPS);
    expect(oldSamples.length).toBeGreaterThan(0);
    expect((await old.getCheckpoint('samples'))?.position).toBe(await events.headPosition());
    await old.close();

    const upgraded = new SqliteReadStore({ path });
    await runLive(upgraded, samplesProjection);
    expect(await storedSamples(upgraded)).toEqual(oldSamples);
    expect(await all(upgraded, SAMPLE_ROLLUPS)).toEqual(oldRollups);
    expect((await logicalState(upgraded, SAMPLE_KEYS)).length).toBe(oldSamples.length);
    expect(await upgraded.count('samples')).toBe(0);
    await upgraded.close();
    const raw = new (await import('better-sqlite3')).default(path, { readonly: true });
    expect(raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'rm_samples'").all()).toEqual([]);
    raw.close();
  });

  it('a read store whose blocks lack `listed` (sample_blocks version 1) is rebuilt on first start: every block then counts the samples the merged view lists', async () => {
    await seed();
    const path = join(tempDir('wellstream-blocks-listed-'), 'read.sqlite');
    const old = new SqliteReadStore({ path });
    // The version before: blocks declared without a version and without `listed`, and stored without it.
    const before: Projection = {
      ...samplesProjection,
      collections: samplesProjection.collections.map((c) => (c.name === SAMPLE_BLOCKS ? { ...c, version: undefined, columns: c.columns!.filter((f) => f !== 'listed') } : c)),
    };
    await runLive(old, before);
    const blocks = (await all(old, SAMPLE_BLOCKS)) as SampleBlockDoc[];
    await old.applyChanges(blocks.map(({ listed: _listed, ...doc }) => ({ op: 'put', collection: SAMPLE_BLOCKS, doc })));
    expect((await all(old, SAMPLE_BLOCKS)).every((b) => !('listed' in b))).toBe(true);
    await old.close();

    const upgraded = new SqliteReadStore({ path });
    await runLive(upgraded, samplesProjection);
    const after = (await all(upgraded, SAMPLE_BLOCKS)) as SampleBlockDoc[];
    expect(after).toEqual(blocks);
    expect(after.some((b) => b.listed < b.count)).toBe(true);
    for (const b of after) expect(b.listed).toBe(decodeBlock(b.data).filter((s) => s.hidden !== true).length);
    await upgraded.close();
  });
});
