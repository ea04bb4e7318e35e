/**
 * `npm run bench -- pages-inprocess [--days=30] [--reps=300]`: the REST page of 1,000 samples
 * (readSamplesPage with the route's template, its answer's body written into the route's kept
 * buffer as the route writes it: src/server/answerBytes.ts) in one thread, without HTTP, read from blocks (issue
 * 38). Beside it, in the same store and run, the bare limits: the raw keyset page of the same
 * samples as one row each (better-sqlite3, `SELECT *`, nothing decoded) and the raw read of the
 * blocks the page needs. CPU ms per page, p50/p99, and a digest of the answer (the page of rows,
 * SQL-written until issue 38 and now gone, is in BENCHMARKS.md).
 *
 * `--uuids`: the samples' external ids are HealthKit's (upper-case UUIDs, derived from the same
 * names), as in an Apple Health import, instead of `<source>-<minute>`.
 *
 * The data: per-minute heart rate from two overlapping sources (Apple Watch listed, a Polar strap
 * hidden in the merged view), as the stats benchmark uploads it; blocks of 1,000 per source and
 * day, as the samples projection cuts them.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { BLOCK_SAMPLES } from '../projections/records/sampleBlocks/sampleBlock.js';
import type { SampleDoc } from '../projections/records/samplesProjection.js';
import { recordKey } from '../projections/records/recordIds.js';
import { listSamplesJson, readSamplesPage } from '../queries/records/listSamples.js';
import { AnswerBytes } from '../src/server/answerBytes.js';
import type { View } from '../queries/records/view.js';
import type { Scalar } from '../src/readstore/readStore.js';
import type { RenderedPage } from '../src/readstore/renderedRows.js';
import { SqliteReadStore } from '../src/readstore/sqliteReadStore.js';
import { QUANTITY_SAMPLE_JSON } from '../src/server/routes/samples.js';
import { BLOCK_SPECS, bothModels, ROWS, ROWS_SPEC } from '../test/support/sampleBlockStores.js';
import { machine } from './support/service.js';

const DAY_MS = 86_400_000;
const USER = 'u-bench';
const SOURCES = [
  { source: 'apple', source_name: 'Apple Watch', source_bundle_id: 'com.apple.health.1A2B3C', device_model: 'Watch', product_type: 'Watch7,1' },
  { source: 'polar', source_name: 'Polar Flow', source_bundle_id: 'fi.polar.polarflow', device_model: 'H10', product_type: 'Polar H10' },
];

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

let uuidIds = false;
/** A UUID derived from `name` (upper case, as HealthKit writes them). */
const uuidOf = (name: string) => createHash('md5').update(name).digest('hex').toUpperCase().replace(/(.{8})(.{4})(.{4})(.{4})(.{12})/, '$1-$2-$3-$4-$5');

function daySamples(dayStart: number, firstId: number): SampleDoc[] {
  const out: SampleDoc[] = [];
  for (let m = 0; m < 1440; m++) {
    const t = new Date(dayStart + m * 60_000).toISOString();
    for (const [k, s] of SOURCES.entries()) {
      const external = uuidIds ? uuidOf(`${s.source}-${dayStart + m}`) : `${s.source}-${dayStart + m}`;
      out.push({
        type: 'heart_rate',
        value: 55 + ((m * 7 + k * 3) % 60),
        unit: 'count/min',
        start_date: t,
        end_date: t,
        source_name: s.source_name,
        source_bundle_id: s.source_bundle_id,
        device_model: s.device_model,
        product_type: s.product_type,
        external_id: external,
        was_user_entered: false,
        metadata: { HKTimeZone: 'Europe/Berlin' },
        provider: 'device-a',
        source: s.source,
        device: `${s.device_model} (${s.product_type})`,
        body_worn: true,
        _id: recordKey(USER, 'device-a', external),
        id: firstId + m * 2 + k,
        user_id: USER,
        tenant_id: 't-bench',
        day: t.slice(0, 10),
        ingested_at: '2026-11-26T00:00:00.000Z',
        hidden: k === 1,
        excluded: false,
        quality: [],
      } as SampleDoc);
    }
  }
  return out;
}

type Timed = { p50: number; p99: number; cpu: number; cpuP99: number };

async function timed(reps: number, f: () => Promise<void>): Promise<Timed> {
  for (let i = 0; i < 20; i++) await f();
  const ms: number[] = [];
  const cpuMs: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < reps; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    await f();
    ms.push(performance.now() - t);
    const dc = process.cpuUsage(c);
    cpuMs.push((dc.user + dc.system) / 1000);
  }
  const cpu = process.cpuUsage(cpu0);
  return { p50: pct(ms, 50), p99: pct(ms, 99), cpu: (cpu.user + cpu.system) / 1000 / reps, cpuP99: pct(cpuMs, 99) };
}

const digest = (p: RenderedPage) => createHash('sha256').update(p.json).update(JSON.stringify(p.next)).digest('hex').slice(0, 12);

export default async function main(args: string[]) {
  const arg = (name: string, dflt: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
  const days = arg('days', 30);
  const reps = arg('reps', 300);
  uuidIds = args.includes('--uuids');
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-pages-inprocess-'));
  const path = join(dir, 'read.sqlite');
  const store = new SqliteReadStore({ path });
  try {
    console.log(`machine: ${machine()}`);
    await store.ensureCollections([ROWS_SPEC, ...BLOCK_SPECS]);
    const base = Date.parse('2025-11-01T00:00:00.000Z');
    for (let d = 0; d < days; d++) await store.applyChanges(bothModels(daySamples(base + d * DAY_MS, 1_000_000 + d * 10_000), [BLOCK_SAMPLES]));
    const pageStart = new Date(base + Math.floor(days / 2) * DAY_MS + 7 * 3_600_000).toISOString();
    console.log(`${days * 1440 * 2} samples (${days} days, 2 sources) as rows and as blocks; pages from ${pageStart}; load average ${loadavg().map((l) => l.toFixed(2)).join(', ')}\n`);

    const db = new Database(path, { readonly: true });
    const rawTime = (sql: string, ...params: unknown[]) => {
      const stmt = db.prepare(sql).raw(true);
      for (let i = 0; i < 20; i++) stmt.all(...params);
      const t = performance.now();
      for (let i = 0; i < reps; i++) stmt.all(...params);
      return (performance.now() - t) / reps;
    };
    const rawRows = rawTime(`SELECT * FROM rm_${ROWS} WHERE "f_user_id" = ? AND "f_type" = 'heart_rate' AND "f_start_date" >= ? ORDER BY "f_start_date", "f_id", _id LIMIT 1000`, USER, pageStart);
    const rawBlocks = rawTime(`SELECT * FROM rm_sample_blocks WHERE "f_user_id" = ? AND "f_type" = 'heart_rate' AND "f_day" >= ? ORDER BY "f_day", "f_start_min", _id LIMIT 4`, USER, pageStart.slice(0, 10));
    db.close();

    // CPU p99: the process's CPU time (every thread: V8's GC helpers too) of the 99th percentile page;
    // unlike the wall p99 it does not count time the machine's other load kept the page waiting.
    console.log('| a page of 1,000 samples from blocks | CPU ms / page | CPU p99 ms | p50 ms | p99 ms | answer digest |');
    console.log('|---|---:|---:|---:|---:|---|');
    for (const view of ['all', 'merged'] as View[]) {
      const window = { start: Date.parse(pageStart), end: null };
      const page = { after: null as Scalar[] | null, limit: 1000 };
      const q = { userId: USER, type: 'heart_rate', window, view };
      // The route's work: the page read, its body written into a kept buffer (answerBytes.ts), the buffer handed back as the answer's `finish` does.
      const r = await timed(reps, async () => {
        const read = await readSamplesPage(store, q, QUANTITY_SAMPLE_JSON, page);
        const out = new AnswerBytes();
        out.write('{"data":[');
        read.write((s) => out.write(s));
        out.write('],"next_cursor":null}');
        out.release();
      });
      // The digest of the page as text, comparable with earlier runs' (listSamplesJson: the same pieces, joined).
      const last = await listSamplesJson(store, q, QUANTITY_SAMPLE_JSON, page);
      console.log(`| view=${view} | ${r.cpu.toFixed(2)} | ${r.cpuP99.toFixed(2)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${digest(last)} |`);
    }
    console.log(`\nraw keyset page of the rows (better-sqlite3, SELECT * … LIMIT 1000): ${rawRows.toFixed(2)} ms; raw read of 4 blocks from the page's day: ${rawBlocks.toFixed(2)} ms`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
