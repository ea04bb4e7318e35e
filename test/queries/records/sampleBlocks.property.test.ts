import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bySampleStart } from '../../../projections/records/sampleBlocks/sampleBlock.js';
import type { SampleDoc } from '../../../projections/records/samplesProjection.js';
import { utcDay } from '../../../projections/records/recordDoc.js';
import { recordKey } from '../../../projections/records/recordIds.js';
import { getSample } from '../../../queries/records/getSample.js';
import { listSamples, listSamplesJson, userHasSamplesOfType } from '../../../queries/records/listSamples.js';
import { countProviderSamples, hasSamplesOnDay, latestSampleEnd, sampleChunks, userSampleTypes } from '../../../queries/records/sampleBlocks.js';
import type { View } from '../../../queries/records/view.js';
import type { Window } from '../../../queries/records/window.js';
import { findPage, type Page } from '../../../queries/shared/page.js';
import type { ReadStore, Scalar } from '../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { QUANTITY_SAMPLE_JSON } from '../../../src/server/routes/samples.js';
import { samplesProjection } from '../../../projections/records/samplesProjection.js';
import { ingested, project, USER as HARNESS_USER } from '../../projections/records/harness.js';
import { perSampleProjection } from '../../projections/records/sampleBlocks/perSampleModel.js';
import { quantity } from '../../server/records/pipelineFixtures.js';
import { renderedRowsPage } from '../../support/renderedRowsPage.js';
import { BLOCK_SPECS, bothModels, ROWS, ROWS_SPEC, rowsQuery } from '../../support/sampleBlockStores.js';
import { tempDir } from '../../support/tmp.js';

/**
 * Issue 38, "Reads from blocks": the API is unchanged (spec "Reads" rule 1, contracts §6 paging).
 * The oracle is the per-sample model as it was: one row per sample in a collection declared by
 * the record projection code the samples used (its index on (user_id, type, start_date, id);
 * test/support/sampleBlockStores.ts),
 * paged by the generic keyset code (findPage; its JSON by renderDoc, renderedRowsPage). The
 * same samples stored as blocks (the codec's encodeBlock, cut at random sizes, some of one key
 * overlapping as re-sent records leave them) must give the same pages, the same bytes and the
 * same cursors, for every limit, window, view and cursor.
 */
const USERS = ['u-1', 'u-2'] as const;
const TENANT = 't-1';
const STREAMS = [
  { provider: 'device-a', source: 'apple' },
  { provider: 'device-a', source: 'garmin' },
  { provider: 'device-b', source: 'apple' },
  { provider: 'polar', source: 'polar' },
] as const;
const TYPES = ['heart_rate', 'step_count'] as const;
const BASE = Date.parse('2026-03-27T22:00:00Z');
const MIN = 60_000;

type Raw = { user: number; stream: number; type: number; minute: number; ms: number; span: number; value: number; hidden: boolean; excluded: boolean; meta: number };

// Starts on a minute grid across four UTC days, and often on a few minutes around a midnight
// (BASE + 120 minutes): ties of start between sources and blocks, and blocks of two days, are common.
const rawArb: fc.Arbitrary<Raw> = fc.record({
  user: fc.integer({ min: 0, max: 9 }).map((u) => (u === 9 ? 1 : 0)),
  stream: fc.integer({ min: 0, max: STREAMS.length - 1 }),
  type: fc.integer({ min: 0, max: TYPES.length - 1 }),
  minute: fc.oneof(fc.integer({ min: 0, max: 4 * 24 * 60 }), fc.integer({ min: 117, max: 123 })),
  ms: fc.constantFrom(0, 0, 0, 500),
  span: fc.constantFrom(0, 1, 5, 90),
  value: fc.oneof(fc.integer({ min: 0, max: 220 }), fc.double({ min: 0, max: 1000, noNaN: true })),
  hidden: fc.boolean(),
  excluded: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  meta: fc.integer({ min: 0, max: 3 }),
});

/** A stored sample row as the projection wrote it: every field, optional ones present or absent. */
function sampleDoc(r: Raw, i: number): SampleDoc {
  const start = BASE + r.minute * MIN + r.ms;
  const { provider, source } = STREAMS[r.stream]!;
  const external = `ext-${i}`;
  const doc: Record<string, unknown> = {
    type: TYPES[r.type],
    value: r.value,
    unit: r.type === 0 ? 'count/min' : 'count',
    start_date: new Date(start).toISOString(),
    end_date: new Date(start + r.span * MIN).toISOString(),
    source_name: r.meta === 1 ? null : 'Watch "7"',
    source_bundle_id: 'com.apple.health',
    device_model: r.meta === 2 ? null : 'Watch',
    product_type: 'Watch7,1',
    external_id: external,
    was_user_entered: r.meta === 3,
    metadata: r.meta === 0 ? {} : { HKTimeZone: 'Europe/Berlin', n: r.meta, note: 'ü 🫀' },
    provider,
    source,
    device: r.meta === 2 ? null : 'Watch (Watch7,1)',
    body_worn: r.stream !== 1,
    _id: recordKey(USERS[r.user]!, provider, external),
    id: 1_000_000 + i * 7 + (i % 3),
    user_id: USERS[r.user],
    tenant_id: TENANT,
    day: utcDay(new Date(start).toISOString()),
    ingested_at: '2026-11-02T10:00:00.000Z',
    excluded: r.excluded,
  };
  // Rows stored before quality flags lack them; rows before the merged view lack `hidden`.
  if (r.meta !== 1) doc.quality = r.excluded ? ['implausible_value'] : [];
  if (r.meta !== 2 || r.hidden) doc.hidden = r.hidden;
  return doc as SampleDoc;
}

let stores = 0;
async function bothStores(samples: readonly SampleDoc[], cuts: readonly number[], resent: ReadonlySet<number>): Promise<ReadStore> {
  const store = new SqliteReadStore({ path: join(tempDir('wellstream-blockreads-'), `read-${++stores}.db`) });
  await store.ensureCollections([ROWS_SPEC, ...BLOCK_SPECS]);
  await store.applyChanges(bothModels(samples, cuts, resent));
  return store;
}

const windowArb: fc.Arbitrary<Window> = fc.record({
  start: fc.option(fc.integer({ min: -60, max: 4 * 24 * 60 + 60 }).map((m) => BASE + m * MIN), { nil: null }),
  end: fc.option(fc.integer({ min: -60, max: 4 * 24 * 60 + 60 }).map((m) => BASE + m * MIN + 30_000), { nil: null }),
});

const caseArb = fc.record({
  raws: fc.array(rawArb, { minLength: 0, maxLength: 160 }),
  cuts: fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }),
  resent: fc.array(fc.integer({ min: 0, max: 159 }), { maxLength: 20 }),
  queries: fc.array(fc.record({ user: fc.constantFrom(0, 1), type: fc.constantFrom(...TYPES), view: fc.constantFrom<View>('merged', 'all'), window: windowArb, limit: fc.integer({ min: 1, max: 40 }) }), {
    minLength: 1,
    maxLength: 4,
  }),
});

describe('sample pages read from blocks equal the per-sample rows\' pages (issue 38; spec "Reads" rule 1, contracts §6)', () => {
  it('every page, its JSON bytes and its cursor, walked to the end, for random multi-source data, windows, views and limits', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ raws, cuts, resent, queries }) => {
        const samples = raws.map(sampleDoc);
        const store = await bothStores(samples, cuts, new Set(resent));
        for (const q of queries) {
          const userId = USERS[q.user]!;
          const list = { userId, type: q.type, window: q.window, view: q.view };
          let after: Scalar[] | null = null;
          for (let pages = 0; ; pages++) {
            const want: Page<SampleDoc> = await findPage<SampleDoc>(store, ROWS, rowsQuery(userId, q.type, q.window, q.view), { after, limit: q.limit });
            const got = await listSamples(store, list, { after, limit: q.limit });
            expect(got.items.map((s) => ({ ...s, primary: undefined }))).toEqual(want.items.map((s) => ({ ...s, primary: undefined })));
            expect(got.next).toEqual(want.next);
            const wantJson = await renderedRowsPage(store, ROWS, rowsQuery(userId, q.type, q.window, q.view), QUANTITY_SAMPLE_JSON, { after, limit: q.limit });
            expect(await listSamplesJson(store, list, QUANTITY_SAMPLE_JSON, { after, limit: q.limit })).toEqual(wantJson);
            if (!want.next) break;
            expect(pages).toBeLessThan(200);
            after = want.next;
          }
        }
        store.close?.();
      }),
      { numRuns: 60 },
    );
  });

  it('a page after the cursor of any sample (a cursor written by the per-sample version) continues where the rows would', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, fc.nat(), async ({ raws, cuts, resent, queries }, pick) => {
        fc.pre(raws.length > 0);
        const samples = raws.map(sampleDoc);
        const store = await bothStores(samples, cuts, new Set(resent));
        const s = samples[pick % samples.length]!;
        const after: Scalar[] = [s.start_date, s.id, s._id];
        for (const q of queries) {
          const list = { userId: s.user_id, type: s.type, window: q.window, view: q.view };
          const want = await findPage<SampleDoc>(store, ROWS, rowsQuery(s.user_id, s.type, q.window, q.view), { after, limit: q.limit });
          const got = await listSamples(store, list, { after, limit: q.limit });
          expect(got.items.map((d) => d.id)).toEqual(want.items.map((d) => d.id));
          expect(got.next).toEqual(want.next);
        }
        store.close?.();
      }),
      { numRuns: 40 },
    );
  });

  it('by id: every sample of its own user, with its merged-view flag; another user\'s id and an unknown id are null; types, provider counts, days and latest ends as the samples say', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ raws, cuts, resent }) => {
        const samples = raws.map(sampleDoc);
        const store = await bothStores(samples, cuts, new Set(resent));
        for (const s of samples) {
          expect(await getSample(store, s.user_id, s.id)).toEqual({ ...s, primary: s.hidden !== true });
          expect(await getSample(store, s.user_id === USERS[0] ? USERS[1] : USERS[0], s.id)).toBeNull();
        }
        expect(await getSample(store, USERS[0], 7)).toBeNull();
        for (const u of USERS) {
          const mine = samples.filter((s) => s.user_id === u);
          for (const t of TYPES) expect(await userHasSamplesOfType(store, u, t)).toBe(mine.some((s) => s.type === t));
          const types: string[] = [];
          for await (const t of userSampleTypes(store, u)) types.push(t);
          expect(types).toEqual([...new Set(mine.map((s) => s.type))].sort());
          for (const { provider } of STREAMS) {
            const theirs = mine.filter((s) => s.provider === provider);
            expect(await countProviderSamples(store, u, provider), `${u} ${provider} count`).toBe(theirs.length);
            const day = theirs[0]?.day ?? '2026-03-28';
            expect(await hasSamplesOnDay(store, u, provider, day)).toBe(theirs.some((s) => s.day === day));
            for (const type of TYPES) {
              const ends = theirs.filter((s) => s.type === type && s.day >= '2026-03-28' && s.day <= '2026-03-29').map((s) => s.end_date);
              const latest = await latestSampleEnd(store, { userId: u, type, provider, fromDay: '2026-03-28', toDay: '2026-03-29' });
              expect(latest).toBe(ends.length ? ends.sort().at(-1) : null);
            }
          }
        }
        store.close?.();
      }),
      { numRuns: 25 },
    );
  });

  it('statistics\' raw path reads the window\'s samples a view counts, in order, in chunks of any size', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, fc.integer({ min: 1, max: 50 }), fc.option(fc.constantFrom(...STREAMS.map((s) => s.provider)), { nil: undefined }), async ({ raws, cuts, resent, queries }, chunk, provider) => {
        const samples = raws.map(sampleDoc);
        const store = await bothStores(samples, cuts, new Set(resent));
        for (const q of queries) {
          const userId = USERS[q.user]!;
          const start = new Date(q.window.start ?? BASE - 86_400_000).toISOString();
          const end = new Date(q.window.end ?? BASE + 5 * 86_400_000).toISOString();
          const leaveOut = q.view === 'all' ? (['excluded'] as const) : (['excluded', 'hidden'] as const);
          const keep = (s: SampleDoc) => s.excluded !== true && (q.view === 'all' || s.hidden !== true);
          const got: number[] = [];
          for await (const rows of sampleChunks(store, { userId, type: q.type, start, end, ...(provider ? { provider } : {}), leaveOut }, chunk)) {
            expect(rows.length).toBeLessThanOrEqual(chunk);
            got.push(...rows.map((r) => r.id));
          }
          const want = samples
            .filter((s) => s.user_id === userId && s.type === q.type && s.start_date >= start && s.start_date < end && (!provider || s.provider === provider) && keep(s))
            .sort(bySampleStart)
            .map((s) => s.id);
          expect(got).toEqual(want);
        }
        store.close?.();
      }),
      { numRuns: 40 },
    );
  });
});

describe('end to end: pages read from the samples projection\'s blocks equal the per-sample projection\'s (issue 38; spec "Reads" rule 1, "Merged view")', () => {
  const E2E_STREAMS = [
    { provider: 'device-a', source: 'apple', body_worn: true },
    { provider: 'device-b', source: 'garmin', body_worn: true },
    { provider: 'device-b', source: 'samsung', body_worn: false },
  ] as const;
  const e2eArb = fc.array(
    fc.record({
      stream: fc.integer({ min: 0, max: E2E_STREAMS.length - 1 }),
      minute: fc.oneof(fc.integer({ min: 0, max: 3 * 24 * 60 }), fc.integer({ min: 117, max: 123 })),
      value: fc.integer({ min: 1, max: 200 }),
      key: fc.integer({ min: 0, max: 400 }),
    }),
    { maxLength: 150 },
  );
  let position = 0;

  it('every page of both views, walked to the end, with its bytes and cursors; a re-sent record (same key) moves, keeping its id', async () => {
    await fc.assert(
      fc.asyncProperty(e2eArb, fc.integer({ min: 1, max: 60 }), async (raws, limit) => {
        // One event per stream and batch of ten records, so a key sent twice may come back in a later event.
        const events = [];
        for (let at = 0; at < raws.length; at += 10)
          for (let s = 0; s < E2E_STREAMS.length; s++) {
            const mine = raws.slice(at, at + 10).filter((r) => r.stream === s);
            if (!mine.length) continue;
            const records = mine.map((r) => {
              const start = new Date(BASE + r.minute * MIN).toISOString();
              return quantity({ external_id: `k${r.key}`, type: 'heart_rate', value: r.value, unit: 'count/min', start_date: start, end_date: start, ...E2E_STREAMS[s]!, device: null });
            });
            events.push(ingested('quantity', ++position, records, { provider: E2E_STREAMS[s]!.provider }));
          }
        const blocks = new SqliteReadStore({ path: join(tempDir('wellstream-blockreads-e2e-'), `b-${++stores}.db`) });
        const rows = new SqliteReadStore({ path: join(tempDir('wellstream-blockreads-e2e-'), `r-${++stores}.db`) });
        await blocks.ensureCollections(samplesProjection.collections);
        await rows.ensureCollections(perSampleProjection.collections);
        await project(blocks, samplesProjection, events);
        await project(rows, perSampleProjection, events);
        for (const view of ['merged', 'all'] as const) {
          const window = { start: null, end: null };
          let after: Scalar[] | null = null;
          for (;;) {
            const want: Page<SampleDoc> = await findPage<SampleDoc>(rows, ROWS, rowsQuery(HARNESS_USER, 'heart_rate', window, view), { after, limit });
            const got = await listSamples(blocks, { userId: HARNESS_USER, type: 'heart_rate', window, view }, { after, limit });
            expect(got.items.map(({ primary: _p, ...s }) => s)).toEqual(want.items);
            expect(got.next).toEqual(want.next);
            const wantJson = await renderedRowsPage(rows, ROWS, rowsQuery(HARNESS_USER, 'heart_rate', window, view), QUANTITY_SAMPLE_JSON, { after, limit });
            expect(await listSamplesJson(blocks, { userId: HARNESS_USER, type: 'heart_rate', window, view }, QUANTITY_SAMPLE_JSON, { after, limit })).toEqual(wantJson);
            if (!want.next) break;
            after = want.next;
          }
        }
        await blocks.close();
        await rows.close();
      }),
      { numRuns: 15 },
    );
  });
});
