/**
 * `npm run bench -- importDecoders [--formats=health-connect,fitbit-takeout,samsung-health] [--base=400000] [--scales=1,3] [--keep]`
 *
 * Bounded memory of the native-export decoders (issue 21): for each format, a synthetic export of
 * `base × scale` heavy records (heart-rate samples, with the format's other files around them) is
 * written to disk and zipped, then decoded from a file byte source in a child process of its own,
 * which reports records/s and its peak resident memory. Memory that stays flat from scale 1 to
 * scale 3 is memory that does not grow with the export. Only the decoders run: no events, no
 * read models (the pipeline's share is the ingest benchmark's).
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { healthConnectSchema } from '../test/fixtures/health-connect/buildHealthConnectExport.js';
import { zipEntriesToFile, type ZipInput } from '../test/fixtures/zip/buildZip.js';
import { fileByteSource } from '../src/sources/files/exportShared/byteSources.js';
import type { ImportDecoder } from '../src/sources/files/importSource.js';
import { machine } from './support/service.js';

type Format = 'health-connect' | 'fitbit-takeout' | 'samsung-health';
const FORMATS: readonly Format[] = ['health-connect', 'fitbit-takeout', 'samsung-health'];

function arg(args: string[], name: string, fallback: string): string {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
}

const DAY = 86_400_000;
const START = Date.UTC(2024, 0, 1);

// ---------------------------------------------------------------------------------------------
// Synthetic exports, written as streams (the generator holds no export in memory either)

async function healthConnectExport(dir: string, samples: number): Promise<string> {
  const dbPath = join(dir, 'health_connect_export.db');
  const db = new Database(dbPath);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  for (const sql of healthConnectSchema()) db.exec(sql);
  db.prepare('INSERT INTO application_info_table VALUES (1, ?, ?, NULL, NULL)').run('com.google.android.apps.fitness', 'Fit');
  db.prepare('INSERT INTO device_info_table VALUES (1, ?, ?, 1)').run('Google', 'Pixel Watch 2');
  const uuid = (n: number) => { const b = Buffer.alloc(16); b.writeUInt32BE(n, 12); b.writeUInt32BE(0xabcdef, 0); return b; };
  const series = db.prepare('INSERT INTO heart_rate_record_table (row_id, uuid, app_info_id, device_info_id, recording_method, start_time, end_time, start_zone_offset, end_zone_offset) VALUES (?, ?, 1, 1, 2, ?, ?, 3600, 3600)');
  const sample = db.prepare('INSERT INTO heart_rate_record_series_table VALUES (?, ?, ?)');
  const steps = db.prepare('INSERT INTO steps_record_table (row_id, uuid, app_info_id, device_info_id, recording_method, start_time, end_time, start_zone_offset, end_zone_offset, count) VALUES (?, ?, 1, 1, 2, ?, ?, 3600, 3600, ?)');
  const perSeries = 1000;
  const fill = db.transaction((from: number, to: number) => {
    for (let s = from; s < to; s++) {
      const t0 = START + s * perSeries * 5000;
      series.run(s + 1, uuid(s + 1), t0, t0 + perSeries * 5000);
      for (let i = 0; i < perSeries; i++) sample.run(s + 1, 55 + ((s + i) % 70), t0 + i * 5000);
      steps.run(s + 1, uuid(1e8 + s), t0, t0 + 600_000, 300 + (s % 500));
    }
  });
  const n = Math.ceil(samples / perSeries);
  for (let s = 0; s < n; s += 200) fill(s, Math.min(n, s + 200));
  db.close();
  const zip = join(dir, 'health-connect.zip');
  await zipEntriesToFile(zip, [{ name: 'health_connect_export.db', data: () => createReadStream(dbPath) }]);
  rmSync(dbPath);
  return zip;
}

const mmddyy = (ms: number) => {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCMonth() + 1)}/${p(d.getUTCDate())}/${p(d.getUTCFullYear() % 100)} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
};

async function fitbitExport(dir: string, samples: number): Promise<string> {
  const perDay = 17_280; // one reading every 5 s
  const days = Math.ceil(samples / perDay);
  const entries: ZipInput[] = [{ name: 'Takeout/Fitbit/Personal & Account/Profile.csv', data: Buffer.from('id,timezone\nX,Europe/Berlin\n') }];
  for (let d = 0; d < days; d++) {
    const date = new Date(START + d * DAY).toISOString().slice(0, 10);
    entries.push({
      name: `Takeout/Fitbit/Global Export Data/heart_rate-${date}.json`,
      data: () =>
        Readable.from(
          (function* () {
            yield '[';
            for (let i = 0; i < perDay; i++) yield `${i ? ',' : ''}{\n  "dateTime" : "${mmddyy(START + d * DAY + i * 5000)}",\n  "value" : {\n    "bpm" : ${55 + (i % 70)},\n    "confidence" : 2\n  }\n}`;
            yield ']';
          })(),
        ),
    });
    entries.push({
      name: `Takeout/Fitbit/Global Export Data/steps-${date}.json`,
      data: () => Readable.from((function* () { yield '['; for (let i = 0; i < 1440; i++) yield `${i ? ',' : ''}{"dateTime":"${mmddyy(START + d * DAY + i * 60_000)}","value":"${i % 90}"}`; yield ']'; })()),
    });
  }
  const zip = join(dir, 'fitbit-takeout.zip');
  await zipEntriesToFile(zip, entries);
  return zip;
}

async function samsungExport(dir: string, samples: number): Promise<string> {
  const P = 'com.samsung.health.heart_rate.';
  const header = ['source', 'tag_id', 'heart_beat_count', 'start_time', 'custom', 'binning_data', 'update_time', 'create_time', 'max', 'min', 'time_offset', 'deviceuuid', 'comment', 'pkg_name', 'end_time', 'datauuid', 'heart_rate'].map((c, i) => (i < 2 ? c : P + c));
  const t = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 23);
  const rows = function* () {
    yield `com.samsung.shealth.tracker.heart_rate,6212007,3\n${header.join(',')}\n`;
    for (let i = 0; i < samples; i++) {
      const s = START + i * 60_000;
      yield `,21313,0,${t(s)},,,${t(s + 90_000)},${t(s + 90_000)},${70 + (i % 9)}.0,${60 + (i % 9)}.0,UTC+0100,ekw9bqx6s/,,com.sec.android.app.shealth,${t(s + 30_000)},${(1e9 + i).toString(16)}-0000-4000-8000-000000000000,${62 + (i % 30)}.0,\n`;
    }
  };
  const zip = join(dir, 'samsung-health.zip');
  await zipEntriesToFile(zip, [{ name: 'samsunghealth_x_20250101/com.samsung.shealth.tracker.heart_rate.20250101120000.csv', data: () => Readable.from(rows()) }]);
  return zip;
}

// ---------------------------------------------------------------------------------------------
// Decoding in a child process of its own

async function decoderFor(format: Format, dir: string): Promise<ImportDecoder> {
  if (format === 'health-connect') return (await import('../src/sources/files/health-connect/healthConnectDecoder.js')).createHealthConnectDecoder({ tempDir: join(dir, 'tmp') });
  if (format === 'fitbit-takeout') return (await import('../src/sources/files/fitbit-takeout/fitbitTakeoutDecoder.js')).fitbitTakeoutDecoder;
  return (await import('../src/sources/files/samsung-health/samsungHealthDecoder.js')).samsungHealthDecoder;
}

async function child(format: Format, zip: string, dir: string): Promise<void> {
  const decoder = await decoderFor(format, dir);
  let records = 0;
  let rejected = 0;
  let heapPeak = 0;
  const timer = setInterval(() => (heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)), 200);
  const t0 = performance.now();
  for await (const item of decoder.decode(fileByteSource(zip), { provider: format, receivedAt: new Date().toISOString(), dataType: null })) {
    if ('record' in item) records++;
    else rejected++;
  }
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  process.stdout.write(JSON.stringify({ records, rejected, seconds, maxRssMiB: process.resourceUsage().maxRSS / 1024, heapPeakMiB: heapPeak / 2 ** 20 }) + '\n');
}

export default async function run(args: string[]): Promise<void> {
  if (args[0] === '--child') return child(args[1] as Format, args[2]!, args[3]!);
  const formats = arg(args, 'formats', FORMATS.join(',')).split(',') as Format[];
  const base = Number(arg(args, 'base', '400000'));
  const scales = arg(args, 'scales', '1,3').split(',').map(Number);
  const dir = mkdtempSync(join(tmpdir(), 'import-decoders-bench-'));
  console.log(`# importDecoders — ${machine()}`);
  console.log('| format | heavy records | zip MiB | records | rejected | seconds | records/s | peak RSS MiB | peak heap MiB |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  try {
    for (const format of formats) {
      for (const scale of scales) {
        const n = base * scale;
        const zip = format === 'health-connect' ? await healthConnectExport(dir, n) : format === 'fitbit-takeout' ? await fitbitExport(dir, n) : await samsungExport(dir, n);
        const self = fileURLToPath(import.meta.url);
        const out = spawnSync(process.execPath, ['--import', 'tsx', join(self, '../run.ts'), 'importDecoders', '--child', format, zip, dir], { encoding: 'utf8', maxBuffer: 1 << 20 });
        if (out.status !== 0) throw new Error(`child failed: ${out.stderr}`);
        const r = JSON.parse(out.stdout.trim().split('\n').pop()!) as { records: number; rejected: number; seconds: number; maxRssMiB: number; heapPeakMiB: number };
        console.log(`| ${format} | ${n.toLocaleString('en')} | ${(statSync(zip).size / 2 ** 20).toFixed(0)} | ${r.records.toLocaleString('en')} | ${r.rejected} | ${r.seconds.toFixed(1)} | ${Math.round(r.records / r.seconds).toLocaleString('en')} | ${r.maxRssMiB.toFixed(0)} | ${r.heapPeakMiB.toFixed(0)} |`);
        rmSync(zip);
      }
    }
  } finally {
    if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
  }
}
