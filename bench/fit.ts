/**
 * `npm run bench -- fit [--mib=50] [--service]`
 *
 * The fit import (issue 39): a zip of the real FIT files in ../shared/realdata/fit, repeated under
 * other names until the zip is about `mib` MiB, decoded from disk by the fit decoder (records/s
 * and peak memory), beside fit-file-parser's own whole-file parse of the same files (messages/s:
 * the decoder alone). With `--service`, first the same zip end to end into the service started as
 * `npm start` starts it (default ETL deadline and memory cap, contracts §18): uploaded by tus, the
 * ETL to `done`, then again under another Upload-Id (all `unchanged`).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import FitParser from 'fit-file-parser';
import { zipEntriesToFile, type ZipInput } from '../test/fixtures/zip/buildZip.js';
import { realdataPath } from '../test/sources/files/realdata.js';
import { fileByteSource } from '../src/sources/files/exportShared/byteSources.js';
import { fitDecoder } from '../src/sources/files/fit/fitDecoder.js';
import type { UploadResource } from '../queries/ingestion/uploads.js';
import { tusUpload } from '../src/cli/tusClient.js';
import { benchUploader, json, machine, startService } from './support/service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The zip through tus and the ETL of a service of its own, twice; its outcome and times. */
async function throughService(dir: string, zip: string, size: number): Promise<void> {
  const svc = await startService(dir);
  try {
    const { admin, token } = await benchUploader(svc);
    await json(await fetch(`${svc.base}/v1/admin/runtime/reset`, { method: 'POST', headers: { authorization: admin.authorization } }));
    for (const uploadId of ['fit-first', 'fit-again']) {
      const t0 = performance.now();
      await tusUpload({ origin: svc.base, token, path: zip, size, metadata: { provider: 'fit', upload_id: uploadId } }, () => {});
      const uploaded = performance.now() - t0;
      let u: UploadResource;
      for (;;) {
        u = await json<UploadResource>(await fetch(`${svc.base}/v1/me/uploads/fit/${uploadId}`, { headers: { authorization: `Bearer ${token}` } }));
        if (u.status === 'done' || u.status === 'failed' || u.status === 'parked') break;
        await sleep(500);
      }
      const done = performance.now() - t0;
      const written = Object.values(u.records).reduce((a, b) => a + b, 0);
      const items = written + u.unchanged + u.rejected;
      const runtime = await json<{ max_rss_bytes: number }>(await fetch(`${svc.base}/v1/admin/runtime`, { headers: { authorization: admin.authorization } }));
      console.log(
        `service ${uploadId}: ${u.status}${u.error ? ` (${u.error})` : ''}, tus ${(uploaded / 1000).toFixed(1)} s, to done ${(done / 1000).toFixed(1)} s, ${Math.round(items / ((done - uploaded) / 1000))} items/s (ETL); written ${JSON.stringify(u.records)}, unchanged ${u.unchanged}, rejected ${u.rejected}; peak RSS of the service ${Math.round(runtime.max_rss_bytes / 2 ** 20)} MiB`,
      );
    }
  } finally {
    await svc.stop();
  }
}

export default async function fitBench(args: string[]): Promise<void> {
  const mib = Number(args.find((a) => a.startsWith('--mib='))?.slice(6) ?? 50);
  const dir = realdataPath('fit');
  if (!dir) {
    console.log('skipped: ../shared/realdata/fit is absent');
    return;
  }
  const files = readdirSync(dir).filter((f) => f.endsWith('.fit')).sort().map((f) => ({ name: f, data: readFileSync(join(dir, f)) }));
  const tmp = mkdtempSync(join(tmpdir(), 'fit-bench-'));
  try {
    // Estimate the copies from one zip of the set, then write the zip once.
    const one = join(tmp, 'one.zip');
    await zipEntriesToFile(one, files);
    const copies = Math.max(1, Math.round((mib * 2 ** 20) / statSync(one).size));
    const entries: ZipInput[] = [];
    for (let i = 0; i < copies; i++) for (const f of files) entries.push({ name: `copy${i}/${f.name}`, data: f.data });
    const zip = join(tmp, 'fit.zip');
    await zipEntriesToFile(zip, entries);
    const zipBytes = statSync(zip).size;
    if (args.includes('--service')) await throughService(mkdtempSync(join(tmp, 'svc-')), zip, zipBytes);

    let peak = 0;
    const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const t0 = performance.now();
    let records = 0;
    let rejected = 0;
    const ctx = { provider: 'fit', receivedAt: new Date().toISOString(), dataType: null };
    for await (const item of fitDecoder().decode(fileByteSource(zip), ctx)) {
      if ('record' in item) records += item.record.kind === 'workout' ? 1 + item.record.route.length : 1;
      else rejected++;
    }
    const decodeS = (performance.now() - t0) / 1000;
    clearInterval(sample);

    const t1 = performance.now();
    let messages = 0;
    for (let i = 0; i < copies; i++) {
      for (const f of files) {
        try {
          const parsed = (await new FitParser({ force: true }).parseAsync(f.data)) as unknown as { messages?: Record<string, unknown[]> };
          for (const list of Object.values(parsed.messages ?? {})) messages += list.length;
        } catch {
          // The damaged files: the whole-file parse reads nothing of them.
        }
      }
    }
    const aloneS = (performance.now() - t1) / 1000;

    console.log(machine());
    console.log(`zip ${(zipBytes / 2 ** 20).toFixed(1)} MiB, ${entries.length} .fit files (${copies} copies of ${files.length})`);
    console.log(`fit decoder: ${records} records (route points counted) + ${rejected} rejections in ${decodeS.toFixed(1)} s = ${Math.round(records / decodeS)} records/s, peak RSS ${Math.round(peak / 2 ** 20)} MiB`);
    console.log(`fit-file-parser whole-file parse alone: ${messages} messages in ${aloneS.toFixed(1)} s = ${Math.round(messages / aloneS)} messages/s`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
