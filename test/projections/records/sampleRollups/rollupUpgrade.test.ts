import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SAMPLE_ROLLUPS } from '../../../../projections/records/sampleRollups/dayRollup.js';
import { samplesProjection } from '../../../../projections/records/samplesProjection.js';
import { sampleStats, statsWindow, type SampleStatsQuery } from '../../../../queries/records/sampleStats.js';
import { SqliteEventStore } from '../../../../src/eventstore/sqliteEventStore.js';
import { ProjectorRuntime } from '../../../../src/projector/projectorRuntime.js';
import type { CollectionSpec, Doc } from '../../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../../../support/tmp.js';
import { quantity } from '../../../server/records/pipelineFixtures.js';
import { ingested, USER } from '../harness.js';

/**
 * Issue 38: the rollup rows changed shape (one column per stat group → packed quarters). A read
 * store written by the version before keeps rollup rows of the old shape; on start the projector
 * finds the collection's declared shape changed, recreates it and rebuilds the samples projection
 * from the events (README, "Upgrading"), so statistics answer as before, from rows of the new shape.
 */

/** The rollup collection as the version before declared it: 168 stat groups of four columns. */
const OLD_GROUPS = [
  ...Array.from({ length: 24 }, (_, i) => `p${i}`),
  ...Array.from({ length: 24 }, (_, i) => `s${i}`),
  ...Array.from({ length: 24 }, (_, i) => `h${i}`),
  ...Array.from({ length: 96 }, (_, i) => `q${i}`),
];
const oldSpecs = (): CollectionSpec[] =>
  samplesProjection.collections.map((c) =>
    c.name === SAMPLE_ROLLUPS ? { ...c, columns: ['provider', 'source', 'unit', 'last_ingested_at', 'flagged', ...OLD_GROUPS.flatMap((g) => ['c', 's', 'n', 'x'].map((s) => `${g}${s}`))] } : c,
  );

let events: SqliteEventStore;
let path: string;
beforeEach(() => {
  events = new SqliteEventStore({ path: ':memory:' });
  path = join(tempDir('wellstream-rollup-upgrade-'), 'read.sqlite');
});
afterEach(async () => {
  await events.close();
});

async function runProjector(readStore: SqliteReadStore): Promise<void> {
  const runtime = new ProjectorRuntime(events, readStore, [samplesProjection]);
  await runtime.start();
  await runtime.waitForIdle(await events.headPosition(), 30_000);
  await runtime.stop();
}

const columnsOf = (table: string): string[] => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
};

/** Three days of heart rate across Kathmandu's and Berlin's local midnights, from two sources; the statistics queries over them, and their answers from a store this version built itself. */
async function seed(): Promise<{ queries: SampleStatsQuery[]; expected: Awaited<ReturnType<typeof sampleStats>>[] }> {
  for (const [i, provider] of ['device-a', 'device-b'].entries()) {
    const records = Array.from({ length: 3 * 96 }, (_, k) => {
      const start = new Date(Date.parse('2026-03-28T00:00:00Z') + k * 900_000 + i * 420_000).toISOString();
      return quantity({ external_id: `${provider}-${k}`, type: 'heart_rate', unit: 'count/min', value: 55 + (k % 40), start_date: start, end_date: start, provider, source: provider, body_worn: i === 0 });
    });
    const e = ingested('quantity', i + 1, records, { provider, ingested_at: '2026-11-06T00:00:00.000Z' });
    await events.appendToStream(`ingest-${USER}-${provider}`, [{ type: e.type, data: e.data }]);
  }
  const queries: SampleStatsQuery[] = ['Asia/Kathmandu', 'Europe/Berlin'].flatMap((tz) =>
    (['day', 'hour'] as const).flatMap((interval) =>
      (['all', 'merged'] as const).map((view) => ({ userId: USER, type: 'heart_rate', window: statsWindow('2026-03-28', '2026-03-31', interval, tz), interval, tz, view })),
    ),
  );

  // What this version answers from a store it built itself.
  const fresh = new SqliteReadStore({ path: join(tempDir('wellstream-rollup-fresh-'), 'read.sqlite') });
  await fresh.ensureCollections(samplesProjection.collections);
  await runProjector(fresh);
  const expected = await Promise.all(queries.map((q) => sampleStats(fresh, q)));
  await fresh.close();
  expect(expected.every((r) => r.buckets.length > 0)).toBe(true);
  return { queries, expected };
}

/** The store at `path` built by this version up to the head of the log, and its rollup rows (to be rewritten in an older shape). */
async function builtStore(): Promise<{ old: SqliteReadStore; rows: Doc[] }> {
  const old = new SqliteReadStore({ path });
  await runProjector(old);
  const rows = await old.find<Doc>(SAMPLE_ROLLUPS, {});
  expect(rows.length).toBeGreaterThan(0);
  return { old, rows };
}

/** The file at `path` opened by this version: rebuilt from the events, it answers what a store this version built answered. */
async function expectRebuilt({ queries, expected }: Awaited<ReturnType<typeof seed>>, check: (upgraded: SqliteReadStore) => Promise<void>): Promise<void> {
  const upgraded = new SqliteReadStore({ path });
  await runProjector(upgraded);
  await check(upgraded);
  for (const [i, q] of queries.entries()) expect(await sampleStats(upgraded, q), `${q.tz} ${q.interval} ${q.view}`).toEqual(expected[i]);
  expect((await upgraded.getCheckpoint(samplesProjection.name))?.position).toBe(await events.headPosition());
  await upgraded.close();
}

describe('a read store with the rollups of the version before (issue 38: read-model upgrade)', () => {
  it('opens, rebuilds the samples projection from the events, and answers the statistics as before the upgrade', async () => {
    const answers = await seed();

    // The store of the version before: its rollups in the old shape, its projection at the head of the log.
    const { old, rows: oldRows } = await builtStore();
    // Rows of the old shape: every group in a column of its own (their values do not matter: they are rebuilt).
    expect(await old.ensureCollections(oldSpecs())).toEqual([SAMPLE_ROLLUPS]);
    await old.applyChanges(oldRows.map(({ quarters: _q, hours: _h, count, ...doc }) => ({ op: 'put' as const, collection: SAMPLE_ROLLUPS, doc: { ...doc, p23c: count } })));
    await old.close();
    expect(columnsOf(`rm_${SAMPLE_ROLLUPS}`)).toContain('f_p23c');
    expect(columnsOf(`rm_${SAMPLE_ROLLUPS}`)).not.toContain('f_quarters');

    // The upgrade: the same file opened by this version.
    await expectRebuilt(answers, async (upgraded) => {
      expect(columnsOf(`rm_${SAMPLE_ROLLUPS}`)).toContain('f_quarters');
      expect(columnsOf(`rm_${SAMPLE_ROLLUPS}`)).not.toContain('f_p23c');
      expect(await upgraded.count(SAMPLE_ROLLUPS)).toBe(oldRows.length);
    });
  });

  it('of version 2 (packed quarters that do not name their day, no hours) opens, is rebuilt, and answers the statistics as before', async () => {
    const answers = await seed();
    const { old, rows } = await builtStore();
    // The collection as version 2 declared it (no hours), its packed quarters with bytes 13–15 zero (version 3 keeps the day there).
    const v2 = samplesProjection.collections.map((c) => (c.name === SAMPLE_ROLLUPS ? { ...c, version: 2, columns: c.columns!.filter((f) => f !== 'hours') } : c));
    expect(await old.ensureCollections(v2)).toEqual([SAMPLE_ROLLUPS]);
    const unnamed = (b: Buffer) => Buffer.concat([b.subarray(0, 13), Buffer.alloc(3), b.subarray(16)]);
    await old.applyChanges(rows.map(({ hours: _h, ...doc }) => ({ op: 'put' as const, collection: SAMPLE_ROLLUPS, doc: { ...doc, quarters: unnamed(doc.quarters as Buffer) } })));
    await old.close();

    await expectRebuilt(answers, async (upgraded) => expect(await upgraded.find<Doc>(SAMPLE_ROLLUPS, {})).toEqual(rows));
  });
});
