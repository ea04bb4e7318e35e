/**
 * `npm run bench -- stats-inprocess [--days=365] [--reps=300]`: the statistics queries of the
 * `stats` benchmark in one thread, without HTTP: CPU time per query (`process.cpuUsage`) and
 * p50/p99 wall clock, with a digest of each answer (the same digest before and after a change
 * means the same buckets, byte for byte).
 *
 * The read store holds the rollups of a year of per-minute heart rate from two overlapping
 * sources (Apple Watch listed, a Polar strap hidden in the merged view), written straight from
 * rollupDay (what the samples projection stores for those samples; no samples rows, which the
 * statistics of a window after 1972 never read).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rollupDay, SAMPLE_ROLLUPS, type RollupSample } from '../projections/records/sampleRollups/dayRollup.js';
import { samplesProjection } from '../projections/records/samplesProjection.js';
import { sampleStats, statsWindow, type StatsInterval } from '../queries/records/sampleStats.js';
import { SqliteReadStore } from '../src/readstore/sqliteReadStore.js';
import { machine } from './support/service.js';

const DAY_MS = 86_400_000;
const USER = 'u-bench';
const SOURCES = ['Apple Watch', 'Polar Flow'];

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

export default async function main(args: string[]) {
  const arg = (name: string, dflt: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
  const days = arg('days', 365);
  const reps = arg('reps', 300);
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-stats-inprocess-'));
  const store = new SqliteReadStore({ path: join(dir, 'read.sqlite') });
  try {
    console.log(`machine: ${machine()}`);
    await store.ensureCollections(samplesProjection.collections);
    const base = Date.parse('2025-11-01T00:00:00.000Z');
    for (let d = 0; d < days; d++) {
      const dayStart = base + d * DAY_MS;
      const samples: RollupSample[] = [];
      for (let m = 0; m < 1440; m++) {
        for (const [k, source] of SOURCES.entries()) {
          samples.push({ startMs: dayStart + m * 60_000, value: 55 + ((m * 7 + k * 3) % 60), provider: 'device-a', source, unit: 'count/min', ingested_at: '2026-11-26T00:00:00.000Z', hidden: k === 1, excluded: false });
        }
      }
      const docs = rollupDay({ user_id: USER, tenant_id: 't-bench', type: 'heart_rate', day: new Date(dayStart).toISOString().slice(0, 10) }, samples);
      await store.applyChanges(docs.map((doc) => ({ op: 'put' as const, collection: SAMPLE_ROLLUPS, doc })));
    }
    console.log(`${await store.count(SAMPLE_ROLLUPS)} rollup rows (${days} days, 2 series, 2 views)\n`);
    const year = { start: '2025-11-01', end: new Date(base + days * DAY_MS).toISOString().slice(0, 10) };
    const month = days >= 151 ? { start: '2026-03-01', end: '2026-04-01' } : { start: year.start, end: new Date(base + Math.min(days, 31) * DAY_MS).toISOString().slice(0, 10) };
    console.log('| query | view | tz | CPU ms / query | p50 ms | p99 ms | buckets | answer digest |');
    console.log('|---|---|---|---:|---:|---:|---:|---|');
    for (const [label, w, interval] of [['day statistics, the year', year, 'day'], ['hour statistics, a month', month, 'hour']] as const) {
      for (const tz of ['Europe/Berlin', 'Asia/Kathmandu']) {
        for (const view of ['all', 'merged'] as const) {
          const run = () => sampleStats(store, { userId: USER, type: 'heart_rate', window: statsWindow(w.start, w.end, interval as StatsInterval, tz), interval, tz, view });
          for (let i = 0; i < 20; i++) await run();
          const ms: number[] = [];
          let last: Awaited<ReturnType<typeof run>> | null = null;
          const cpu0 = process.cpuUsage();
          for (let i = 0; i < reps; i++) {
            const t = performance.now();
            last = await run();
            ms.push(performance.now() - t);
          }
          const cpu = process.cpuUsage(cpu0);
          const digest = createHash('sha256').update(JSON.stringify(last)).digest('hex').slice(0, 12);
          console.log(`| ${label} | ${view} | ${tz} | ${((cpu.user + cpu.system) / 1000 / reps).toFixed(2)} | ${pct(ms, 50).toFixed(2)} | ${pct(ms, 99).toFixed(2)} | ${last!.buckets.length} | ${digest} |`);
        }
      }
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
