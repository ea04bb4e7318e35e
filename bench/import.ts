/**
 * `npm run bench -- import [--mb=200] [--dir=<path>] [--keep]`: a generated Health app export.xml
 * of about `mb` MiB (bench/support/appleExportGenerator.ts) imported end to end into the service
 * started as `npm start` starts it: uploaded by tus (the CLI's client), processed by the ETL from
 * the raw store, read back. Then the same file again under another Upload-Id: every record counts
 * in `unchanged`, none is written.
 *
 * Reported: upload seconds; ETL seconds and records/s (upload accepted → `done`); seconds until the
 * coverage report stops growing (all records queryable); peak resident memory of the service (all
 * threads); the re-import's seconds, records written and unchanged, and its time against the first;
 * the service's CPU time per item (all threads, from /proc); then, as the limit beside it, the decoder
 * alone over the same file in a process of its own (bench/support/appleParsePhase.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { UploadResource } from '../queries/ingestion/uploads.js';
import { tusUpload } from '../src/cli/tusClient.js';
import { writeExportXml } from './support/appleExportGenerator.js';
import { benchUploader, cpuMsOf, json, machine, startService } from './support/service.js';
import { cpuSplit, printCpuSplit, processCpu } from './support/threadCpu.js';

function arg(args: string[], name: string, fallback: string): string {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export default async function importBench(args: string[]): Promise<void> {
  const mb = Number(arg(args, 'mb', '200'));
  const keep = args.includes('--keep') || args.some((a) => a.startsWith('--dir='));
  const dir = arg(args, 'dir', '') || mkdtempSync(join(tmpdir(), 'wellstream-bench-import-'));
  mkdirSync(dir, { recursive: true });
  const xml = join(dir, `export-${mb}.xml`);
  console.log(`import: ${mb} MiB export.xml, ${machine()}`);
  const svcDir = mkdtempSync(join(dir, 'svc-'));
  try {
    if (!existsSync(xml)) {
      const t = performance.now();
      const c = await writeExportXml(xml, { targetBytes: mb * 2 ** 20 });
      console.log(`generated ${xml}: ${c.days} days, ${fmt(c.records)} Records, ${c.workouts} workouts in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    const size = statSync(xml).size;
    const svc = await startService(svcDir, { IMPORT_MAX_BYTES: String(64 * 2 ** 30) });
    try {
      const { admin, tk, userId, token } = await benchUploader(svc);
      const user = { id: userId };
      await json(await fetch(`${svc.base}/v1/admin/runtime/reset`, { method: 'POST', headers: { authorization: admin.authorization } }));

      const importOnce = async (uploadId: string) => {
        const t0 = performance.now();
        const cpu0 = cpuMsOf(svc.child.pid);
        const threads0 = processCpu(svc.child.pid);
        await tusUpload({ origin: svc.base, token, path: xml, size, metadata: { provider: 'apple-health', upload_id: uploadId } }, () => {});
        const uploaded = performance.now() - t0;
        let u: UploadResource;
        for (;;) {
          u = await json<UploadResource>(await fetch(`${svc.base}/v1/me/uploads/apple-health/${uploadId}`, { headers: { authorization: `Bearer ${token}` } }));
          if (u.status === 'done' || u.status === 'failed' || u.status === 'parked') break;
          await sleep(250);
        }
        if (u.status !== 'done') throw new Error(`the import ended ${u.status}: ${u.error}`);
        const done = performance.now() - t0;
        // Queryable: the coverage report (every record kind, every day) stops growing.
        let last = -1;
        let still = 0;
        for (;;) {
          const cov = await json<{ days: { records: number }[] }>(await fetch(`${svc.base}/v1/users/${user.id}/coverage?view=all&start=1990-01-01&end=2100-01-01`, { headers: tk }));
          const n = cov.days.reduce((s, d) => s + d.records, 0);
          still = n === last ? still + 1 : 0;
          last = n;
          if (still >= 4) break;
          await sleep(500);
        }
        const cpu1 = cpuMsOf(svc.child.pid);
        const threads1 = processCpu(svc.child.pid);
        const split = threads0 && threads1 ? cpuSplit(threads0, threads1) : null;
        return { u, uploaded, done, queryable: performance.now() - t0 - 2000, cpuMs: cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null, split };
      };

      const first = await importOnce('bench-first');
      const written = Object.values(first.u.records).reduce((a, b) => a + b, 0);
      const items = written + first.u.rejected + first.u.unchanged;
      const runtime = await json<{ max_rss_bytes: number }>(await fetch(`${svc.base}/v1/admin/runtime`, { headers: { authorization: admin.authorization } }));
      const again = await importOnce('bench-again');
      const rewritten = Object.values(again.u.records).reduce((a, b) => a + b, 0);
      const s = (ms: number) => (ms / 1000).toFixed(1);
      console.log(`\nexport.xml ${fmt(size / 2 ** 20)} MiB: ${fmt(items)} items (${fmt(written)} records written: ${Object.entries(first.u.records).map(([k, n]) => `${k} ${fmt(n)}`).join(', ')}; ${fmt(first.u.rejected)} rejected)\n`);
      console.log('| run | upload (tus) s | to done s | records/s to done | to queryable s | records/s end to end | written | unchanged |');
      console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
      console.log(`| first import | ${s(first.uploaded)} | ${s(first.done)} | ${fmt(items / ((first.done - first.uploaded) / 1000))} (ETL) | ${s(first.queryable)} | ${fmt(items / (first.queryable / 1000))} | ${fmt(written)} | ${fmt(first.u.unchanged)} |`);
      console.log(`| the same file again | ${s(again.uploaded)} | ${s(again.done)} | ${fmt(items / ((again.done - again.uploaded) / 1000))} (ETL) | ${s(again.queryable)} | – | ${fmt(rewritten)} | ${fmt(again.u.unchanged)} |`);
      console.log(`\nre-import / first import, to done: ${Math.round((again.done / first.done) * 100)} %`);
      const perItem = (ms: number | null) => (ms === null ? 'n/a' : `${((ms * 1000) / items).toFixed(1)} µs`);
      console.log(`service CPU time (all threads) per item: first import ${perItem(first.cpuMs)}, re-import ${perItem(again.cpuMs)}`);
      console.log(`peak resident memory of the service (all threads) during the first import: ${(runtime.max_rss_bytes / 2 ** 20).toFixed(0)} MiB`);
      // Where each run's CPU went, per thread (the ETL and projector are worker threads): ms per 1,000 items is µs per item.
      if (first.split) printCpuSplit('service CPU by thread, first import (upload to queryable)', first.split, items / 1000, '1,000 items');
      if (again.split) printCpuSplit('service CPU by thread, re-import (upload to queryable)', again.split, items / 1000, '1,000 items');
    } finally {
      await svc.stop();
    }
    // The limit beside it, in the same run: the decoder alone over the same file, in a process of its own.
    const phase = join(dirname(fileURLToPath(import.meta.url)), 'support', 'appleParsePhase.ts');
    const r = spawnSync(process.execPath, ['--import', 'tsx', phase, 'decode', xml, '1000000'], { encoding: 'utf8', maxBuffer: 1 << 24 });
    const parsed = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { items?: number; seconds?: number; peakRssMiB?: number };
    if (parsed.items && parsed.seconds) console.log(`parsing alone (the decoder, nothing stored): ${fmt(parsed.items)} items in ${parsed.seconds.toFixed(1)} s, ${fmt(parsed.items / parsed.seconds)} items/s, peak RSS ${parsed.peakRssMiB} MiB`);
    else console.log(`parsing alone failed: ${r.stderr.slice(0, 500)}`);
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
    else console.log(`kept: ${dir}`);
  }
}
