import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ingestStream } from '../../../commands/ingestion/ingestedEvents.js';
import type { DeviceParser, NormalizedRecord, ParseItem } from '../../../commands/ingestion/records.js';
import type { EventSealer } from '../../../src/crypto/recordSealing.js';
import type { EventStore } from '../../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { BLOCK_RECORDS, DECIDE_RECORDS, MIN_BLOCK_RECORDS } from '../../../src/processes/etl/recordBlocks.js';
import { recordIdentity } from '../../../src/processes/etl/recordLedger.js';
import { runEtlJob, type EtlKeys } from '../../../src/processes/etl/runEtlJob.js';
import { boundedItem } from '../../../src/processes/etl/withinBounds.js';
import { boundsChecker } from '../../../commands/ingestion/recordBounds.js';
import type { RawStore } from '../../../src/rawstore/rawStore.js';
import type { RecordLedger } from '../../../src/recordledger/recordLedger.js';
import { appleUpload, crashingAfter, ledgerBackends } from './etlRunFakes.js';
import { quantity } from '../../server/records/pipelineFixtures.js';

/**
 * contracts §13 `unchanged` (issue 38): a run comparing blocks of records first counts and writes
 * exactly what a run noting every record on its own (`compareBlocks: false`, the oracle) counts
 * and writes, for every mix of uploads; and a block another upload committed costs no per-record
 * fingerprint or lookup.
 */

const USER = 'u1';
const upload = appleUpload(USER);
const jobName = (n: number) => `upload-${USER}-${String(n).padStart(64, '0')}`;

/** An item of a test export: a sample, a day's summary, or a line the parser rejects. */
type Spec =
  | { kind: 'quantity'; type: 'heart_rate' | 'step_count'; source: string; day: number; minute: number; value: number }
  | { kind: 'daily_summary'; source: string; day: number; value: number }
  | { kind: 'rejected'; line: number }
  /** Not an item: where the parser waits for (or fails with) the run's `atGate`. */
  | { kind: 'gate' };

const at = (day: number, minute: number) => new Date(Date.UTC(2025, 0, 1 + day, 0, minute)).toISOString();

function itemOf(s: Exclude<Spec, { kind: 'gate' }>): ParseItem {
  const provenance = { provider: 'apple-health', source: s.kind === 'rejected' ? '' : s.source, device: null, body_worn: true };
  if (s.kind === 'rejected') return { rejected: { location: String(s.line), reason: 'unreadable', excerpt: `line ${s.line}` } };
  if (s.kind === 'daily_summary') {
    const date = at(s.day, 0).slice(0, 10);
    return { record: { ...provenance, kind: 'daily_summary', external_id: `summary-${date}`, date, steps: s.value, active_energy_kcal: null, distance_m: null, resting_heart_rate: null, avg_heart_rate: null, sleep_seconds: null, metadata: {} } };
  }
  const start = at(s.day, s.minute);
  const end = s.type === 'step_count' ? at(s.day, s.minute + 1) : start;
  return {
    record: quantity({
      ...provenance,
      // The same in every run of one export (a resumed run re-sends the same events); no part of what makes a record the same.
      external_id: `${s.type}-${s.source}-${start}-${s.value}`,
      type: s.type,
      value: s.type === 'heart_rate' ? 60 + s.value : s.value,
      unit: s.type === 'heart_rate' ? 'count/min' : 'count',
      start_date: start,
      end_date: end,
    }),
  };
}

/** A parser yielding the export's items, built afresh each run (the ETL sets their quality flags). */
const parserOf = (specs: readonly Spec[], atGate: () => Promise<void>): DeviceParser => ({
  slug: 'apple-health',
  async *parse() {
    for (const s of specs) {
      if (s.kind === 'gate') await atGate();
      else yield itemOf(s);
    }
  },
});
const emptyRaw = { kind: 'file', get: async () => Buffer.alloc(0) } as unknown as RawStore;
/**
 * Events carry their records in the clear, so the test reads what each job wrote; the ledger's key is the data key's.
 * The records are the JSON the sealer is given, as the real one seals (a sealed job's batch keeps no records).
 */
const clearSealer = {
  keyId: 'u1/apple-health/0',
  seal: (_type: string, data: object, field: string, json: string | Buffer) => ({ ...data, [field]: JSON.parse(json.toString()) as unknown }),
} as unknown as EventSealer;

type Outcome = { records: Record<string, number>; unchanged: number; rejected: number };

/** One ledger and log, and uploads of the same user's provider into them, comparing blocks first or (the oracle) not. */
function world(openLedger: () => RecordLedger, compareBlocks: boolean) {
  const store = new SqliteEventStore({ path: ':memory:' });
  const ledger = openLedger();
  const keys: EtlKeys = { sealer: clearSealer, dataKey: { key: randomBytes(32), keyId: 'u1/apple-health/0' } };
  closing.push(async () => {
    await ledger.close();
    await store.close();
  });
  const run = async (job: number, specs: readonly Spec[], checkpointItems: number, eventStore: EventStore = store, blocks = compareBlocks, atGate = async () => {}): Promise<Outcome> => {
    const out = await runEtlJob(eventStore, emptyRaw, parserOf(specs, atGate), jobName(job), upload, undefined, keys, { ledger, checkpointItems, compareBlocks: blocks });
    return { records: out.records, unchanged: out.unchanged, rejected: out.rejected };
  };
  return {
    store,
    ledger,
    run,
    /** Killed after `appends` appends to its stream, then run again (the same job): a crash and its resume. */
    crashThenResume: async (job: number, specs: readonly Spec[], checkpointItems: number, appends: number): Promise<Outcome> => {
      await run(job, specs, checkpointItems, crashingAfter(store, ingestStream(USER, jobName(job)), appends)).catch((err: Error) => {
        if (err.message !== 'killed') throw err;
      });
      return run(job, specs, checkpointItems);
    },
    /** Killed after `appends` appends and never resumed (it parked: issue 35). */
    park: (job: number, specs: readonly Spec[], checkpointItems: number, appends: number) =>
      run(job, specs, checkpointItems, crashingAfter(store, ingestStream(USER, jobName(job)), appends)).then(
        () => 'finished' as const,
        (err: Error) => {
          if (err.message !== 'killed') throw err;
          return 'parked' as const;
        },
      ),
    /** The identities of the records job `n` appended to the log, sorted (a multiset). */
    written: async (job: number): Promise<string[]> => {
      const events = await store.readStream(ingestStream(USER, jobName(job)));
      return events
        .filter((e) => e.type.endsWith('.ingested'))
        .flatMap((e) => (e.data as { records: NormalizedRecord[] }).records)
        .map(recordIdentity)
        .sort();
    },
  };
}

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c();
});

/** A Health app export's order: by type, then source, then time; `perDay` samples of each. */
function orderedExport(days: number, perDay: number, from = 0): Spec[] {
  const out: Spec[] = [];
  for (const type of ['heart_rate', 'step_count'] as const)
    for (const source of ['apple', 'polar'])
      for (let day = from; day < from + days; day++) for (let minute = 0; minute < perDay; minute++) out.push({ kind: 'quantity', type, source, day, minute: minute * 3, value: (day * 7 + minute) % 40 });
  for (let day = from; day < from + days; day++) out.push({ kind: 'daily_summary', source: 'apple', day, value: day * 100 });
  return out;
}

type Step = { kind: 'run' | 'resume'; specs: Spec[]; appends?: number };

/** The uploads in order, in a world comparing blocks and in the oracle's: every outcome and every job's log the same. */
async function sameAsOracle(openLedger: () => RecordLedger, steps: readonly Step[], checkpointItems: number) {
  const results: { outcomes: Outcome[]; logs: string[][] }[] = [];
  for (const compareBlocks of [true, false]) {
    const w = world(openLedger, compareBlocks);
    const outcomes: Outcome[] = [];
    for (const [i, step] of steps.entries())
      outcomes.push(step.kind === 'run' ? await w.run(i + 1, step.specs, checkpointItems) : await w.crashThenResume(i + 1, step.specs, checkpointItems, step.appends ?? 0));
    results.push({ outcomes, logs: await Promise.all(steps.map((_, i) => w.written(i + 1))) });
  }
  expect(results[0]).toEqual(results[1]);
  return results[0]!.outcomes;
}

describe.each(ledgerBackends)('contracts §13 unchanged: blocks first, the per-record rule as the oracle, ledger on %s (issue 38)', (_name, openLedger) => {
  const base = orderedExport(4, 30);
  const total = base.filter((s) => s.kind !== 'rejected').length;

  it('the same export again: every record unchanged, nothing written, as record by record', async () => {
    const outcomes = await sameAsOracle(openLedger, [{ kind: 'run', specs: base }, { kind: 'run', specs: base }, { kind: 'run', specs: base }], 100);
    expect(outcomes.map((o) => o.unchanged)).toEqual([0, total, total]);
  });

  it('a newer export holding the older one (days added, the last day grown) writes only what is new, as record by record', async () => {
    const older = orderedExport(3, 20);
    // Each type and source's series gets more of its last day and two more days: what Apple's export order gives.
    const newer = orderedExport(5, 30);
    const outcomes = await sameAsOracle(openLedger, [{ kind: 'run', specs: older }, { kind: 'run', specs: newer }, { kind: 'run', specs: newer }], 100);
    const olderTotal = older.length;
    expect(outcomes[1]).toMatchObject({ unchanged: olderTotal });
    expect(outcomes[2]).toMatchObject({ unchanged: newer.length, records: {} });
  });

  it('an export with one value changed writes that one record; its block goes record by record', async () => {
    const changed = base.map((s, i) => (i === 100 && s.kind === 'quantity' ? { ...s, value: s.value + 1 } : s));
    const outcomes = await sameAsOracle(openLedger, [{ kind: 'run', specs: base }, { kind: 'run', specs: changed }], 100);
    expect(outcomes[1]).toMatchObject({ records: { quantity: 1 }, unchanged: total - 1 });
  });

  it(`a run of one key longer than a block (${BLOCK_RECORDS} records), rejected lines inside runs, duplicates within a block and across blocks of one key`, async () => {
    const long: Spec[] = Array.from({ length: BLOCK_RECORDS * 2 + 7 }, (_, i) => ({ kind: 'quantity', type: 'heart_rate', source: 'apple', day: 0, minute: i % 1440, value: Math.floor(i / 1440) }));
    const export1: Spec[] = [
      ...long,
      ...base.slice(0, 50),
      { kind: 'rejected', line: 1 },
      ...base.slice(50, 60),
      // The same samples again, after other keys: their key's run comes back.
      ...base.slice(0, 5),
      ...base.slice(5, 6),
      ...base.slice(5, 6),
      ...base.slice(60),
    ];
    const grown = [...export1.slice(0, 300), ...base.slice(200, 201), ...export1.slice(300)];
    await sameAsOracle(openLedger, [{ kind: 'run', specs: export1 }, { kind: 'run', specs: export1 }, { kind: 'run', specs: grown }, { kind: 'run', specs: export1 }], 250);
  });

  it('rows left by runs that noted records only (no block fingerprints yet) answer the same: the next re-import goes record by record, the one after by blocks', async () => {
    const w = world(openLedger, true);
    await w.run(1, base, 100, w.store, false);
    const looked = spyNotes(w.ledger);
    expect(await w.run(2, base, 100)).toMatchObject({ records: {}, unchanged: total });
    const firstReimport = looked.records();
    expect(await w.run(3, base, 100)).toMatchObject({ records: {}, unchanged: total });
    // Every record and every block noted once; then the blocks alone, and the records in no block.
    expect(firstReimport).toBe(total + BLOCKS_OF_BASE);
    expect(looked.records() - firstReimport).toBe(BLOCKS_OF_BASE + LOOSE_OF_BASE);
  });

  it.each([0, 1, 2, 5])('a run killed after %i appends and resumed decides as the first did, before and after another upload of the same records', async (appends) => {
    const grown = orderedExport(5, 30);
    await sameAsOracle(
      openLedger,
      [
        { kind: 'resume', specs: base, appends },
        { kind: 'resume', specs: grown, appends },
        { kind: 'run', specs: grown },
      ],
      60,
    );
  });

  // `ks` are a block of one key, `x` has that key too, `ys` are a block of another. The rejected line makes both worlds decide what came before it.
  const ks: Spec[] = Array.from({ length: MIN_BLOCK_RECORDS }, (_, i) => ({ kind: 'quantity', type: 'heart_rate', source: 'apple', day: 1, minute: i, value: 1 }));
  const x: Spec = { kind: 'quantity', type: 'heart_rate', source: 'apple', day: 1, minute: 100, value: 1 };
  const ys: Spec[] = ks.map((k) => ({ ...k, type: 'step_count' }) as Spec);
  const rejectedLine: Spec = { kind: 'rejected', line: 9 };
  const written = (o: Outcome) => Object.values(o.records).reduce((a, b) => a + b, 0);

  it('another upload committing, in the middle of a run, a block of records the run claimed earlier (in a block of the same key): the run writes them again, as record by record', async () => {
    const outcomes: Outcome[][] = [];
    for (const compareBlocks of [true, false]) {
      const w = world(openLedger, compareBlocks);
      const other: Outcome[] = [];
      const mine = await w.run(1, [...ks, x, rejectedLine, { kind: 'gate' }, ...ys, ...ks], 100, w.store, compareBlocks, async () => {
        other.push(await w.run(2, ks, 100));
      });
      outcomes.push([mine, ...other, await w.run(3, [...ks, x, ...ys], 100)]);
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    // `ks` written twice by the first job (it had claimed them when it met them again), once by the second.
    expect(written(outcomes[0]![0]!)).toBe(3 * MIN_BLOCK_RECORDS + 1);
    expect(written(outcomes[0]![1]!)).toBe(MIN_BLOCK_RECORDS);
  });

  it('a run resumed after a crash, another upload having committed meanwhile a block of records the crashed run claimed before its checkpoint, decides as the first did', async () => {
    const outcomes: Outcome[][] = [];
    for (const compareBlocks of [true, false]) {
      const w = world(openLedger, compareBlocks);
      const specs: Spec[] = [...ks, x, rejectedLine, ...ys, { kind: 'gate' }, ...ks];
      await expect(
        w.run(1, specs, 3, w.store, compareBlocks, async () => {
          throw new Error('crashed');
        }),
      ).rejects.toThrow('crashed');
      const other = await w.run(2, ks, 100);
      outcomes.push([await w.run(1, specs, 3), other, await w.run(3, [...ks, x, ...ys], 100)]);
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    expect(written(outcomes[0]![0]!)).toBe(3 * MIN_BLOCK_RECORDS + 1);
  });

  it.each([0, 1, 3])('contracts §19 (issue 35): a job parked after %i appends makes a later upload skip exactly the records it appended, the rest written', async (appends) => {
    const w = world(openLedger, true);
    expect(await w.park(1, base, 60, appends)).toBe('parked');
    const inLog = await w.written(1);
    expect(inLog.length).toBeLessThan(total);
    expect((await w.run(2, base, 60)).unchanged).toBe(inLog.length);
    // Between them, every record of the export once.
    expect([...inLog, ...(await w.written(2))].sort()).toEqual(identitiesOf(base));
    expect(await w.run(3, base, 60)).toMatchObject({ records: {}, unchanged: total });
  });

  it('two uploads of the same export at once both finish, together write every record, and a third counts every record unchanged', async () => {
    const w = world(openLedger, true);
    const [a, b] = await Promise.all([w.run(1, base, 60), w.run(2, base, 60)]);
    for (const o of [a, b]) expect(Object.values(o.records).reduce((x, y) => x + y, 0) + o.unchanged).toBe(total);
    expect([...new Set([...(await w.written(1)), ...(await w.written(2))])].sort()).toEqual(identitiesOf(base));
    expect(await w.run(3, base, 60)).toMatchObject({ records: {}, unchanged: total });
  });

  it('a re-import of the same export notes one fingerprint per block and none per record of a block (issue 38)', async () => {
    const w = world(openLedger, true);
    const looked = spyNotes(w.ledger);
    await w.run(1, base, 100);
    const first = looked.records();
    // The first import notes every record and every block.
    expect(first).toBeGreaterThan(total);
    await w.run(2, base, 100);
    expect(looked.records() - first).toBe(BLOCKS_OF_BASE + LOOSE_OF_BASE);
  });

  it('an export interleaving keys line by line (no run long enough to be a block) notes its records in batches, not one ledger call per record (issue 38)', async () => {
    const interleaved: Spec[] = Array.from({ length: 1200 }, (_, i) => ({ kind: 'quantity', type: i % 2 ? 'heart_rate' : 'step_count', source: 'apple', day: 0, minute: i, value: i % 40 }));
    const w = world(openLedger, true);
    let calls = 0;
    const note = w.ledger.note.bind(w.ledger);
    w.ledger.note = (job, fps, older) => {
      calls++;
      return note(job, fps, older);
    };
    expect(await w.run(1, interleaved, 10_000)).toMatchObject({ records: { quantity: 1200 } });
    // One decision as the first record completes (no block known yet), then DECIDE_RECORDS at a time.
    expect(calls).toBeLessThanOrEqual(1 + Math.ceil(1200 / DECIDE_RECORDS) + 1);
    calls = 0;
    expect(await w.run(2, interleaved, 10_000)).toMatchObject({ records: {}, unchanged: 1200 });
    expect(calls).toBeLessThanOrEqual(1 + Math.ceil(1200 / DECIDE_RECORDS) + 1);
  });

  it('property: any sequence of exports derived from one (same, grown, changed, cut, reordered, crashed and resumed) counts and writes as record by record', async () => {
    const spec: fc.Arbitrary<Spec> = fc.oneof(
      { weight: 12, arbitrary: fc.record({ kind: fc.constant('quantity' as const), type: fc.constantFrom('heart_rate' as const, 'step_count' as const), source: fc.constantFrom('apple', 'polar'), day: fc.integer({ min: 0, max: 3 }), minute: fc.integer({ min: 0, max: 6 }), value: fc.integer({ min: 0, max: 2 }) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('daily_summary' as const), source: fc.constant('apple'), day: fc.integer({ min: 0, max: 3 }), value: fc.integer({ min: 0, max: 1 }) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('rejected' as const), line: fc.integer({ min: 0, max: 3 }) }) },
    );
    const keyOf = (s: Spec) => (s.kind === 'rejected' || s.kind === 'gate' ? '' : `${s.kind}${'type' in s ? s.type : ''}${s.source}${s.day}`);
    const derive = (specs: Spec[], how: { op: number; at: number; extra: Spec[] }): Spec[] => {
      const i = specs.length === 0 ? 0 : how.at % specs.length;
      switch (how.op) {
        case 0:
          return specs;
        case 1:
          return [...specs, ...how.extra];
        case 2:
          return [...specs.slice(0, i), ...how.extra, ...specs.slice(i)];
        case 3:
          return specs.map((s, j) => (j === i && s.kind === 'quantity' ? { ...s, value: s.value + 1 } : s));
        case 4:
          return specs.slice(0, i);
        default:
          // Grouped as an export groups them (stable: the order within a key kept).
          return [...specs].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
      }
    };
    await fc.assert(
      fc.asyncProperty(
        fc.array(spec, { maxLength: 80 }),
        fc.array(fc.record({ op: fc.integer({ min: 0, max: 5 }), at: fc.nat(), extra: fc.array(spec, { maxLength: 12 }), crash: fc.option(fc.integer({ min: 0, max: 4 }), { freq: 3 }) }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 3, max: 40 }),
        async (first, changes, checkpointItems) => {
          let specs = first;
          const steps: Step[] = [{ kind: 'run', specs }];
          for (const c of changes) {
            specs = derive(specs, c);
            steps.push(c.crash === null ? { kind: 'run', specs } : { kind: 'resume', specs, appends: c.crash });
          }
          await sameAsOracle(openLedger, steps, checkpointItems);
          for (const c of closing.splice(0)) await c();
        },
      ),
      { numRuns: 40 },
    );
  });
});

/** The blocks of `orderedExport(4, 30)`: 2 types × 2 sources × 4 days of samples. */
const BLOCKS_OF_BASE = 16;
/** Its records in no block: a summary a day, each alone of its key (fewer than MIN_BLOCK_RECORDS). */
const LOOSE_OF_BASE = 4;

/** The identities of an export's records as the ETL stores them (with their quality flags), sorted (its records are distinct). */
const identitiesOf = (specs: readonly Spec[]) =>
  specs
    .flatMap((s) => (s.kind === 'gate' ? [] : [boundedItem(itemOf(s), boundsChecker(upload.accepted_at), upload.accepted_at)]))
    .flatMap((i) => ('record' in i ? [recordIdentity(i.record)] : []))
    .sort();

/** Counts the fingerprints noted through `ledger` (records and blocks alike: the port cannot tell them apart). */
function spyNotes(ledger: RecordLedger) {
  let n = 0;
  const note = ledger.note.bind(ledger);
  ledger.note = (job, fps) => {
    n += fps.length;
    return note(job, fps);
  };
  return { records: () => n };
}
