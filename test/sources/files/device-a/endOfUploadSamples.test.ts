import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { heavierFlow } from '../../../../src/sources/derivations/menstrualCycles.js';
import { groupsOf, sleepNights } from '../../../../src/sources/derivations/sleepSessions.js';
import { FlowDays, type SleepMember, SleepSamples } from '../../../../src/sources/files/device-a/endOfUploadSamples.js';
import { sleepSessionOf, sleepSessions } from '../../../../src/sources/files/device-a/nightsAndCycles.js';
import type { Prov } from '../../../../src/sources/files/device-a/upload.js';
import { decode, realdata } from '../apple-health/exportFixtures.js';

/**
 * contracts §3 (sleep sessions, menstrual cycles from a source's samples): the compact store an
 * upload keeps its sleep and flow samples in must give exactly the nights, sessions and flow days
 * the plain lists gave (a list of sample objects, deduplicated by id through a Set; the flow
 * samples grouped by source and reduced per day at the end), over random input and real exports.
 */

const GAP = 2 * 3_600_000;
const PHASES = ['in_bed', 'asleep', 'awake', 'core', 'deep', 'rem'];

const provOf = (key: string): Prov => ({
  key,
  provider: 'device-a',
  source: 'apple',
  device: null,
  body_worn: true,
  source_name: `name ${key}`,
  source_bundle_id: null,
  device_model: null,
  product_type: null,
  maker: null,
});

/** The plain list as the upload kept it before: the first sample of each id, in the order they came. */
function plainList(samples: readonly SleepMember<Prov>[]): SleepMember<Prov>[] {
  const seen = new Set<string>();
  return samples.filter((m) => !seen.has(m.id) && (seen.add(m.id), true));
}

/** The sessions the plain list gave: every night built, then all sorted by bedtime. */
function plainSessions(list: SleepMember<Prov>[]): SleepSessionRecord[] {
  return sleepNights(list, GAP)
    .map(sleepSessionOf)
    .sort((a, b) => (a.bedtime_start < b.bedtime_start ? -1 : a.bedtime_start > b.bedtime_start ? 1 : 0));
}

function compactStore(samples: readonly SleepMember<Prov>[]): SleepSamples<Prov> {
  const store = new SleepSamples<Prov>();
  for (const m of samples) store.add(m.prov, m.start, m.end, m.id, m.value, m.tz);
  return store;
}

/** The store's nights as lists of samples, in the order it gives them. */
function compactNights(store: SleepSamples<Prov>): SleepMember<Prov>[][] {
  const { order, nights } = store.nights(GAP);
  return nights.map((n) => Array.from(order.subarray(n.from, n.to), (i) => store.memberOf(i)));
}

const provs = ['a', 'b', 'c'].map(provOf);
/** Ids drawn from a small pool so that repeats occur; some beyond Latin-1, some empty-ish or long. */
const idArb = fc.oneof(
  fc.constantFrom('E1', 'E2', 'E3', 'ü-id', 'ид-1', 'ид-2', '😴', 'x'.repeat(200)),
  fc.integer({ min: 0, max: 400 }).map((n) => `category:${n.toString(16).padStart(32, '0')}`),
  fc.uuid().map((u) => u.toUpperCase()),
);
const sampleArb = fc
  .record({
    prov: fc.constantFrom(...provs),
    // Starts on a coarse grid so that equal starts and ends (ties broken by id) are frequent.
    start: fc.integer({ min: 0, max: 200 }).map((n) => n * 15 * 60_000),
    length: fc.integer({ min: 0, max: 40 }).map((n) => n * 15 * 60_000),
    id: idArb,
    value: fc.constantFrom(...PHASES),
    tz: fc.constantFrom(null, 'Europe/Berlin', 'America/New_York'),
  })
  .map((r): SleepMember<Prov> => ({ group: r.prov.key, prov: r.prov, start: r.start, end: r.start + r.length, id: r.id, value: r.value, tz: r.tz }));

describe('sleep samples kept compactly (contracts §3: one night per source, samples less than 2 h apart)', () => {
  it('keep each id once, the first sent, and give every id back as it was sent', () => {
    fc.assert(
      fc.property(fc.array(sampleArb, { maxLength: 600 }), (samples) => {
        const store = compactStore(samples);
        const list = plainList(samples);
        expect(store.size).toBe(list.length);
        expect(Array.from({ length: store.size }, (_, i) => store.memberOf(i))).toEqual(list);
      }),
      { numRuns: 200 },
    );
  });

  it('give the same nights, in the same order, as the plain list through sleepNights', () => {
    fc.assert(
      fc.property(fc.array(sampleArb, { maxLength: 600 }), (samples) => {
        expect(compactNights(compactStore(samples))).toEqual(sleepNights(plainList(samples), GAP));
      }),
      { numRuns: 200 },
    );
  });

  it('give byte-identical sleep sessions, in the same order, as the plain list', () => {
    fc.assert(
      fc.property(fc.array(sampleArb, { maxLength: 400 }), (samples) => {
        const sessions = [...sleepSessions(compactStore(samples))];
        expect(JSON.stringify(sessions)).toBe(JSON.stringify(plainSessions(plainList(samples))));
      }),
      { numRuns: 150 },
    );
  });
});

type FlowSample = { prov: Prov; date: string; value: string; tz: string | null };

/** The flow days the plain list gave at the end: per source in order of first sample, the first of the heaviest per date. */
function plainFlowDays(samples: readonly FlowSample[]): { key: string; days: [string, { value: string; tz: string | null }][] }[] {
  return groupsOf(samples, (m) => m.prov.key).map((group) => {
    const days = new Map<string, FlowSample>();
    for (const m of group) if (heavierFlow(m.value, days.get(m.date)?.value)) days.set(m.date, m);
    return { key: group[0]!.prov.key, days: [...days].map(([d, m]) => [d, { value: m.value, tz: m.tz }]) };
  });
}

describe('menstrual-flow samples reduced as they come (contracts §3: several samples on one day keep the heaviest flow)', () => {
  it('keep per source and day the same flow and time zone as the plain list reduced at the end', () => {
    const flowArb = fc.record({
      prov: fc.constantFrom(...provs),
      date: fc.integer({ min: 1, max: 20 }).map((d) => `2024-03-${String(d).padStart(2, '0')}`),
      value: fc.constantFrom('unspecified', 'light', 'medium', 'heavy'),
      tz: fc.constantFrom(null, 'Europe/Berlin', 'Asia/Tokyo'),
    });
    fc.assert(
      fc.property(fc.array(flowArb, { maxLength: 300 }), (samples) => {
        const flow = new FlowDays<Prov>();
        for (const m of samples) flow.add(m.prov, m.date, m.value, m.tz);
        const compact = [...flow.bySource()].map((s) => ({ key: s.prov.key, days: [...s.days] }));
        expect(compact).toEqual(plainFlowDays(samples));
      }),
      { numRuns: 200 },
    );
  });
});

const healthkit = realdata('healthkit');

describe.skipIf(!healthkit)('sleep sessions of the real export.xml files: the compact store against the plain list', () => {
  if (!healthkit) console.log('skipped: ../shared/realdata/healthkit is absent');
  const files = healthkit ? readdirSync(healthkit).filter((f) => f.endsWith('.xml') && !f.includes('_cda')) : [];
  afterEach(() => vi.restoreAllMocks());

  it.each(files)('%s: the decoder’s sessions equal those built from the samples it kept, as a plain list', async (file) => {
    // Every sample the decoder hands the store, as the plain list received them before.
    const sent: SleepMember<Prov>[] = [];
    const add = SleepSamples.prototype.add;
    vi.spyOn(SleepSamples.prototype, 'add').mockImplementation(function (this: SleepSamples<Prov>, prov, start, end, id, value, tz) {
      sent.push({ group: prov.key, prov, start, end, id, value, tz });
      return add.call(this, prov, start, end, id, value, tz);
    });
    const { records } = await decode(readFileSync(join(healthkit!, file)));
    const sessions = records.filter((r) => r.kind === 'sleep_session');
    expect(JSON.stringify(sessions)).toBe(JSON.stringify(plainSessions(plainList(sent))));
  });
});
