/**
 * `npm run bench -- apple-parse [--mb=200] [--zip] [--dir=<path>] [--keep]`: the apple-health
 * decoder over a generated Health app export of about `mb` MiB (bench/support/appleExportGenerator.ts:
 * overlapping watch and phone sources, sleep stages, workouts with GPX routes, DST offsets, stray
 * control characters), next to the physical limit of the same work: saxes tokenising the same
 * bytes with no normalisation. Each phase runs in its own process (its peak RSS is its own).
 *
 * Reported: items (records + rejected) per second, MB/s, peak RSS, the heap retained at each tenth
 * of the run (after a full collection: flat when memory does not grow with the file), and ours / raw. `--zip` also decodes export.zip (the
 * document deflated in the archive, routes read from their GPX entries). `--dir` reuses files
 * generated before (they are kept there).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeExportXml, writeExportZip } from './support/appleExportGenerator.js';
import { machine } from './support/service.js';

type PhaseResult = { phase: string; items: number; records: number; rejected: number; seconds: number; peakRssMiB: number; peakHeapMiB: number; heapAtStartMiB: number; heapAlongMiB: number[] };

const here = dirname(fileURLToPath(import.meta.url));

function arg(args: string[], name: string, fallback: string): string {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
}

function runPhase(phase: 'raw' | 'decode', file: string, expected: number): PhaseResult {
  // --expose-gc: the heap along the run is measured after a full collection (what is retained).
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(here, 'support', 'appleParsePhase.ts'), phase, file, String(expected)], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`${phase} ${file} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as PhaseResult;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export default async function appleParse(args: string[]): Promise<void> {
  const mb = Number(arg(args, 'mb', '200'));
  const keep = args.includes('--keep') || args.some((a) => a.startsWith('--dir='));
  const dir = arg(args, 'dir', '') || mkdtempSync(join(tmpdir(), 'wellstream-bench-apple-'));
  mkdirSync(dir, { recursive: true });
  const xml = join(dir, `export-${mb}.xml`);
  const zip = join(dir, `export-${mb}.zip`);
  console.log(`apple-parse: ${mb} MiB export, ${machine()}`);
  try {
    if (!existsSync(xml)) {
      const t = performance.now();
      const c = await writeExportXml(xml, { targetBytes: mb * 2 ** 20 });
      console.log(`generated ${xml}: ${c.days} days, ${fmt(c.records)} Records, ${c.workouts} workouts in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    if (args.includes('--zip') && !existsSync(zip)) {
      const t = performance.now();
      await writeExportZip(zip, { targetBytes: mb * 2 ** 20 });
      console.log(`generated ${zip} (${fmt(statSync(zip).size / 2 ** 20)} MiB) in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    const bytes = statSync(xml).size;
    const raw = runPhase('raw', xml, 0);
    const ours = runPhase('decode', xml, raw.items);
    const rows: [string, PhaseResult][] = [
      ['raw: saxes tokenising export.xml (elements)', raw],
      ['ours: apple-health decoder, export.xml', ours],
    ];
    if (args.includes('--zip')) rows.push(['ours: apple-health decoder, export.zip', runPhase('decode', zip, raw.items)]);
    console.log(`\nexport.xml: ${fmt(bytes / 2 ** 20)} MiB, ${fmt(raw.items)} top-level elements\n`);
    console.log('| measurement | items | seconds | items/s | MB/s | peak RSS MiB | heap retained along the run, MiB | ours / raw |');
    console.log('|---|---:|---:|---:|---:|---:|---|---:|');
    for (const [name, r] of rows) {
      const rate = r.items / r.seconds;
      const along = r.heapAlongMiB.length ? `${Math.min(...r.heapAlongMiB)}–${Math.max(...r.heapAlongMiB)}` : '–';
      const ratio = r === raw ? '–' : `${Math.round((r.seconds === 0 ? 0 : raw.seconds / r.seconds) * 100)} %`;
      console.log(`| ${name} | ${fmt(r.items)} | ${r.seconds.toFixed(1)} | ${fmt(rate)} | ${(bytes / 1e6 / r.seconds).toFixed(1)} | ${r.peakRssMiB} | ${along} | ${ratio} |`);
    }
    console.log(`\ndecoder items: ${fmt(ours.records)} records, ${fmt(ours.rejected)} rejected (a type the catalog lacks, on purpose)`);
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
    else console.log(`kept: ${dir}`);
  }
}
