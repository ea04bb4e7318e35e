/**
 * `npm run bench -- etl-device-a [--lines=100000] [--runs=2] [--dir=PATH] [--no-ledger]`: one bulk job's ETL alone,
 * in this process: the ingest bench's device-a upload (bench/ingest.ts `makeLines`: heart rate from
 * two sources and steps, interleaved line by line), gzip, through `runEtlJob` into an embedded event
 * store and record ledger, sealed, as an ETL thread runs it, without the service, its thread start
 * or the projector's pacing. Each run is a new upload of new records (nothing `unchanged`).
 *
 * Reported per run: seconds, the CPU of this thread (what the ingest bench's per-thread table
 * calls an ETL thread) and of the whole process (V8's GC and compiler threads too), in µs per
 * record, with the load average. `--dir` puts the stores elsewhere (/dev/shm: no fsync waits);
 * `--no-ledger` runs without the record ledger (what the ledger costs).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { UploadAccepted } from '../commands/ingestion/upload.js';
import { eventSealer } from '../src/crypto/recordSealing.js';
import { CoalescedAppends } from '../src/eventstore/coalescedAppends.js';
import { SqliteEventStore } from '../src/eventstore/sqliteEventStore.js';
import { runEtlJob } from '../src/processes/etl/runEtlJob.js';
import type { RawStore } from '../src/rawstore/rawStore.js';
import { SqliteRecordLedger } from '../src/recordledger/sqliteRecordLedger.js';
import { healthKitParser } from '../src/sources/files/device-a/healthKitParser.js';
import { makeLines } from './ingest.js';
import { machine } from './support/service.js';
import { statCpuMs } from './support/threadCpu.js';

/** CPU ms of this thread (the main thread: its tid is the pid) from /proc, or null off Linux. */
function threadCpuMs(): number | null {
  try {
    return statCpuMs(`/proc/self/task/${process.pid}/stat`);
  } catch {
    return null;
  }
}
const processCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export default async function etlDeviceA(args: string[]): Promise<void> {
  const arg = (name: string, dflt: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
  const n = Number(arg('lines', '100000'));
  const runs = Number(arg('runs', '2'));
  const noLedger = args.includes('--no-ledger');
  const dir = mkdtempSync(join(arg('dir', tmpdir()), 'wellstream-bench-etl-'));
  try {
    console.log(`etl-device-a: ${n} lines a run, stores in ${dir}${noLedger ? ', no record ledger' : ''}, ${machine()}`);
    console.log('\n| run | s | this thread: CPU s | µs / record | process: CPU s | µs / record | load average |');
    console.log('|---|---:|---:|---:|---:|---:|---|');
    const store = new CoalescedAppends(new SqliteEventStore({ path: join(dir, 'events.sqlite') }));
    const ledger = new SqliteRecordLedger(join(dir, 'record-ledger.sqlite'));
    const key = randomBytes(32);
    const keys = { sealer: eventSealer('u1/device-a/0', key), dataKey: { key, keyId: 'u1/device-a/0' } };
    for (let r = 1; r <= runs; r++) {
      // Later days for each run: new records, as the ingest bench's parts are (three lines a minute).
      const payload = gzipSync(makeLines(n, (r - 1) * Math.ceil(n / 3 / 1440 + 1)).map((l) => JSON.stringify(l)).join('\n'), { level: 6 });
      const raw = { get: async () => payload } as unknown as RawStore;
      const upload: UploadAccepted['data'] = { upload_id: `bench-${r}`, user_id: 'u1', tenant_id: 't1', provider: 'device-a', object_key: 'upload', sha256: 'cd'.repeat(32), bytes: payload.length, content_type: 'application/x-ndjson', tier: 'upload', accepted_at: new Date().toISOString(), token_id: 'tok' };
      const t0 = performance.now();
      const c0 = processCpuMs();
      const th0 = threadCpuMs();
      const out = await runEtlJob(store, raw, healthKitParser, `upload-u1-${String(r).padStart(64, '0')}`, upload, undefined, keys, noLedger ? {} : { ledger });
      const th = threadCpuMs();
      const cpu = processCpuMs() - c0;
      const written = Object.values(out.records).reduce((a, b) => a + b, 0);
      if (written !== n) throw new Error(`run ${r}: ${written} records written of ${n} (${out.rejected} rejected, ${out.unchanged} unchanged)`);
      const thread = th === null || th0 === null ? null : th - th0;
      const us = (ms: number) => ((ms * 1000) / n).toFixed(1);
      console.log(`| ${r} | ${((performance.now() - t0) / 1000).toFixed(2)} | ${thread === null ? '' : (thread / 1000).toFixed(2)} | ${thread === null ? '' : us(thread)} | ${(cpu / 1000).toFixed(2)} | ${us(cpu)} | ${loadavg().map((x) => x.toFixed(1)).join(' ')} |`);
    }
    await ledger.close();
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
