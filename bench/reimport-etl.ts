/**
 * `npm run bench -- reimport-etl [--mb=200] [--runs=1]`: the ETL alone, in this process, over a
 * generated Health app export.xml (bench/support/appleExportGenerator.ts): the first import into an
 * embedded event store and record ledger, then the same file again (every record `unchanged`),
 * then the decoder alone over the same file, the limit of a re-import (the formats cannot be
 * entered mid-way, so a re-import decodes the whole file again). No HTTP, upload or projector:
 * what the ETL thread does for an import, with the load average beside each figure.
 *
 * Reported per run: seconds, CPU seconds of this process, items/s and CPU µs per item, and the
 * re-import's time against the first import's and against the decoder's.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UploadAccepted } from '../commands/ingestion/upload.js';
import { eventSealer } from '../src/crypto/recordSealing.js';
import { SqliteEventStore } from '../src/eventstore/sqliteEventStore.js';
import { runEtlJob } from '../src/processes/etl/runEtlJob.js';
import type { RawStore } from '../src/rawstore/rawStore.js';
import { SqliteRecordLedger } from '../src/recordledger/sqliteRecordLedger.js';
import { appleHealthImport } from '../src/sources/files/apple-health/appleHealthDecoder.js';
import { writeExportXml } from './support/appleExportGenerator.js';
import { machine } from './support/service.js';

function arg(args: string[], name: string, fallback: string): string {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const load = () => loadavg().map((x) => x.toFixed(1)).join(' ');
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

type Timed = { s: number; cpuS: number; items: number; written: number; unchanged: number; load: string };

export default async function reimportEtl(args: string[]): Promise<void> {
  const mb = Number(arg(args, 'mb', '200'));
  const runs = Number(arg(args, 'runs', '1'));
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-reimport-'));
  try {
    const xml = join(dir, 'export.xml');
    await writeExportXml(xml, { targetBytes: mb * 2 ** 20 });
    const size = statSync(xml).size;
    console.log(`reimport-etl: ${fmt(size / 2 ** 20)} MiB export.xml, ${machine()}`);
    const raw = { kind: 'file', size: async () => size, readRange: (_k: string, s: number, e: number) => createReadStream(xml, { start: s, end: e - 1, highWaterMark: 256 * 1024 }) } as unknown as RawStore;
    const upload: UploadAccepted['data'] = { upload_id: 'bench', user_id: 'u1', tenant_id: 't1', provider: 'apple-health', object_key: 'export', sha256: 'cd'.repeat(32), bytes: size, content_type: 'application/xml', tier: 'upload', accepted_at: new Date().toISOString(), token_id: 'tok' };
    console.log('\n| run | s | CPU s | items/s | CPU µs / item | written | unchanged | load average |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---|');
    const row = (name: string, t: Timed) =>
      console.log(`| ${name} | ${t.s.toFixed(2)} | ${t.cpuS.toFixed(2)} | ${fmt(t.items / t.s)} | ${((t.cpuS * 1e6) / t.items).toFixed(1)} | ${fmt(t.written)} | ${fmt(t.unchanged)} | ${t.load} |`);
    for (let r = 1; r <= runs; r++) {
      const runDir = mkdtempSync(join(dir, 'run-'));
      const store = new SqliteEventStore({ path: join(runDir, 'events.sqlite') });
      const ledger = new SqliteRecordLedger(join(runDir, 'record-ledger.sqlite'));
      const key = randomBytes(32);
      const keys = { sealer: eventSealer('u1/apple-health/0', key), dataKey: { key, keyId: 'u1/apple-health/0' } };
      const importOnce = async (n: number): Promise<Timed> => {
        const t0 = performance.now();
        const c0 = cpuMs();
        const out = await runEtlJob(store, raw, appleHealthImport, `upload-u1-${String(n).padStart(64, '0')}`, upload, undefined, keys, { ledger });
        const written = Object.values(out.records).reduce((a, b) => a + b, 0);
        return { s: (performance.now() - t0) / 1000, cpuS: (cpuMs() - c0) / 1000, items: written + out.unchanged + out.rejected, written, unchanged: out.unchanged, load: load() };
      };
      const first = await importOnce(1);
      const again = await importOnce(2);
      await ledger.close();
      await store.close();
      const t0 = performance.now();
      const c0 = cpuMs();
      let items = 0;
      for await (const _ of appleHealthImport.decode({ size, read: (s, e) => raw.readRange('export', s, e) }, { provider: 'apple-health', receivedAt: upload.accepted_at, dataType: null })) items++;
      const decode: Timed = { s: (performance.now() - t0) / 1000, cpuS: (cpuMs() - c0) / 1000, items, written: 0, unchanged: 0, load: load() };
      row(`${r}: first import`, first);
      row(`${r}: the same file again`, again);
      row(`${r}: the decoder alone`, decode);
      console.log(`| ${r}: re-import / first import | ${Math.round((again.s / first.s) * 100)} % | ${Math.round((again.cpuS / first.cpuS) * 100)} % | | | | | |`);
      console.log(`| ${r}: re-import / decoder alone | ${Math.round((again.s / decode.s) * 100)} % | ${Math.round((again.cpuS / decode.cpuS) * 100)} % | | | | | |`);
      rmSync(runDir, { recursive: true, force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
