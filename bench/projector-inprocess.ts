/**
 * `npm run bench -- projector-inprocess [--lines=100000] [--events=1,2,20]`: the samples projection
 * alone, in one thread, without the service: the ingest bench's records (per-minute heart rate from
 * two sources and steps, events of a thousand records) applied as the live runner applies them
 * (evolve, the derivation, one transaction per batch) in batches of each `--events` size: 1-2 is
 * what a paced live projector takes, 20 a rebuild's chunk. Reported per batch size: CPU time per
 * record (`process.cpuUsage`, this process), wall time, the time in the derivation and in the
 * store's apply, the garbage collector's pauses (perf_hooks), the rows the merged view's derivation
 * decided, made into members and counted into rollups again per record (batchSpans.ts), and the digest of the blocks, locators
 * and rollups (every batch size must store the same bytes).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { isMainThread, workerData } from 'node:worker_threads';
import { startWorker } from '../src/shared/workerThreads.js';
import type { QuantityRecord } from '../commands/ingestion/records.js';
import { INGESTED_EVENT } from '../commands/ingestion/records.js';
import { derivationCounts } from '../projections/records/mergedView/batchSpans.js';
import { storedLocators } from '../projections/records/sampleBlocks/recentLocators.js';
import { SAMPLE_BLOCKS, SAMPLE_KEYS } from '../projections/records/sampleBlocks/sampleBlock.js';
import { samplesProjection } from '../projections/records/samplesProjection.js';
import { SAMPLE_ROLLUPS } from '../projections/records/sampleRollups/dayRollup.js';
import type { RecordedEvent } from '../src/eventstore/eventStore.js';
import { deriveBatch, pushChanges } from '../src/projector/batchChanges.js';
import type { PositionedChange } from '../src/readstore/readStore.js';
import { SqliteReadStore } from '../src/readstore/sqliteReadStore.js';
import { machine } from './support/service.js';
import { readIo } from './support/threadCpu.js';

const USER = '00000000-0000-4000-8000-0000000000aa';
const SOURCES = [
  { type: 'heart_rate', unit: 'count/min', source: 'com.apple.health.1A2B3C', source_name: 'Apple Watch', device: 'Watch (Watch7,1)' },
  { type: 'heart_rate', unit: 'count/min', source: 'fi.polar.polarflow', source_name: 'Polar Flow', device: 'H10 (Polar H10)' },
  { type: 'step_count', unit: 'count', source: 'com.apple.health.9F8E7D', source_name: 'iPhone', device: 'iPhone (iPhone15,2)' },
];

/** A fixed uuid per line, so that the digests of two runs (before and after a change) compare. */
const uuidOf = (i: number): string => {
  const h = createHash('sha256').update(String(i)).digest('hex').toUpperCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

function events(lines: number): RecordedEvent[] {
  const base = Date.parse('2025-11-01T00:00:00.000Z');
  const out: RecordedEvent[] = [];
  for (let from = 0, pos = 1; from < lines; from += 1000, pos++) {
    const records: QuantityRecord[] = [];
    for (let i = from; i < Math.min(lines, from + 1000); i++) {
      const s = SOURCES[i % 3]!;
      const t = new Date(base + Math.floor(i / 3) * 60_000).toISOString();
      records.push({ kind: 'quantity', external_id: uuidOf(i), type: s.type, unit: s.unit, value: s.unit === 'count' ? i % 40 : 55 + (i % 60), start_date: t, end_date: t, source_name: s.source_name, source_bundle_id: s.source, device_model: null, product_type: null, was_user_entered: false, metadata: { HKTimeZone: 'Europe/Berlin' }, provider: 'device-a', source: s.source, device: s.device, body_worn: true });
    }
    const data = { job: 'job-1', user_id: USER, tenant_id: 't-bench', provider: 'device-a', ingested_at: '2026-12-07T06:00:00.000Z', batch: pos, records };
    out.push({ id: `e${pos}`, type: INGESTED_EVENT.quantity, data, metadata: {}, streamName: `ingest-${USER}`, streamRevision: pos, globalPosition: pos, createdAt: new Date('2026-12-07T06:00:00.000Z') });
  }
  return out;
}

export default async function main(args: string[]) {
  // `--young=MiB`: run in a worker thread with the projector thread's resource limits and this young generation.
  const young = args.find((a) => a.startsWith('--young='))?.split('=')[1];
  if (young && isMainThread) {
    const worker = startWorker(new URL(import.meta.url), { workerData: { args }, loadsTypeScript: true, resourceLimits: { maxOldGenerationSizeMb: 160, maxYoungGenerationSizeMb: Number(young) } });
    await new Promise((resolve, reject) => worker.on('exit', resolve).on('error', reject));
    return;
  }
  const arg = (name: string, dflt: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
  const lines = Number(arg('lines', '100000'));
  const sizes = arg('events', '1,2,20').split(',').map(Number);
  console.log(`machine: ${machine()}; ${lines} records in events of 1,000`);
  const log = events(lines);
  let gcMs = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  }).observe({ entryTypes: ['gc'] });
  console.log('| events per batch | batches | CPU µs / record | wall s | derive s | apply s | GC pauses s | KiB written / batch | rows decided / built / rolled per record | digest |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---|---|');
  for (const size of sizes) {
    const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-projector-'));
    const store = new SqliteReadStore({ path: join(dir, 'read.sqlite') });
    await store.ensureCollections(samplesProjection.collections);
    let deriveMs = 0;
    let applyMs = 0;
    let batches = 0;
    gcMs = 0;
    const counts0 = { ...derivationCounts };
    const written0 = bytesWritten();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let seq = 0;
    for (let i = 0; i < log.length; i += size) {
      const batch = log.slice(i, i + size);
      const changes: PositionedChange[] = [];
      for (const e of batch) pushChanges(samplesProjection, e, changes, ++seq);
      const d0 = performance.now();
      await deriveBatch(store, samplesProjection.derive!, batch, changes, (c) => store.applyChanges(c));
      const a0 = performance.now();
      await store.applyBatch({ projection: samplesProjection.name, expectedPosition: i === 0 ? 0 : log[i - 1]!.globalPosition, position: batch[batch.length - 1]!.globalPosition, mode: 'live', lastEventAt: null, changes });
      deriveMs += a0 - d0;
      applyMs += performance.now() - a0;
      batches++;
    }
    const wall = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const written = bytesWritten() - written0;
    const h = createHash('sha256');
    // The locators as one set, main's and the recent tier's (storedLocators): their split depends on where the merges fell.
    for (const c of [SAMPLE_BLOCKS, SAMPLE_KEYS, SAMPLE_ROLLUPS]) {
      if (c === SAMPLE_KEYS) for await (const d of storedLocators(store)) h.update(JSON.stringify(d));
      else for (const d of await store.find(c, { sort: [['_id', 1]] })) h.update(JSON.stringify(d));
    }
    console.log(`| ${size} | ${batches} | ${((cpu.user + cpu.system) / lines).toFixed(1)} | ${wall.toFixed(1)} | ${(deriveMs / 1000).toFixed(1)} | ${(applyMs / 1000).toFixed(1)} | ${(gcMs / 1000).toFixed(1)} | ${Math.round(written / 1024 / batches).toLocaleString('en')} | ${perRecord(counts0, lines)} | ${h.digest('hex').slice(0, 16)} |`);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (!isMainThread && (workerData as { args?: string[] } | null)?.args) await main((workerData as { args: string[] }).args.filter((a) => !a.startsWith('--young=')));

/** The merged view's derivation's rows (batchSpans.ts derivationCounts) since `from`, per record: decided, built into members, counted into rollups again. */
function perRecord(from: typeof derivationCounts, lines: number): string {
  const per = (k: keyof typeof derivationCounts) => ((derivationCounts[k] - from[k]) / lines).toFixed(2);
  return `${per('decided')} / ${per('built')} / ${per('rolled')}`;
}

/** Bytes this process has had written to files so far (Linux `/proc/self/io` wchar: the write-ahead log's frames and the checkpoints' pages, before the page cache). */
function bytesWritten(): number {
  return readIo('/proc/self/io')?.wchar ?? NaN;
}
