/**
 * One measured phase of `npm run bench -- apple-parse`, run in its own process so that its peak
 * resident memory is its own: `node --import tsx bench/support/appleParsePhase.ts <raw|decode> <file>`.
 * Prints one JSON line.
 *
 * - raw: the physical limit of the same work: the file's bytes decoded as UTF-8 and tokenised by
 *   saxes (the parser the decoder uses), counting top-level elements; no normalisation.
 * - decode: the apple-health decoder over the same file (export.xml or export.zip), every item
 *   counted and dropped.
 */
import { createReadStream } from 'node:fs';
import { SaxesParser } from 'saxes';
import { appleHealthImport } from '../../src/sources/files/apple-health/appleHealthDecoder.js';
import { fileByteSource } from '../../src/sources/files/exportShared/byteSources.js';

const [phase, file] = process.argv.slice(2);
const mib = (b: number) => Math.round((b / 2 ** 20) * 10) / 10;
let peakRss = 0;
let peakHeap = 0;
const sample = () => {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
};
const timer = setInterval(sample, 50);
const heapAtStart = process.memoryUsage().heapUsed;
/** Heap after each tenth of the items: flat when memory does not grow with the file. */
const heapAlong: number[] = [];

async function raw(): Promise<{ items: number; records: number; rejected: number }> {
  const parser = new SaxesParser({ position: true });
  let depth = 0;
  let items = 0;
  parser.on('opentag', () => {
    if (++depth === 2) items++;
  });
  parser.on('closetag', () => {
    depth--;
  });
  parser.on('error', () => {});
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of createReadStream(file!, { highWaterMark: 256 * 1024 })) parser.write(decoder.decode(chunk as Buffer, { stream: true }));
  parser.close();
  return { items, records: items, rejected: 0 };
}

async function decode(expected: number): Promise<{ items: number; records: number; rejected: number }> {
  let records = 0;
  let rejected = 0;
  const step = Math.max(1, Math.floor(expected / 10));
  for await (const item of appleHealthImport.decode(fileByteSource(file!), { provider: 'apple-health', receivedAt: '2026-01-01T00:00:00.000Z', dataType: null })) {
    if ('record' in item) records++;
    else rejected++;
    if ((records + rejected) % step === 0) {
      sample();
      // With --expose-gc the heap is measured after a full collection: what is retained, not what awaits collection.
      (globalThis as { gc?: () => void }).gc?.();
      heapAlong.push(mib(process.memoryUsage().heapUsed));
    }
  }
  return { items: records + rejected, records, rejected };
}

const t0 = performance.now();
const out = phase === 'raw' ? await raw() : await decode(Number(process.argv[4] ?? 1_000_000));
const seconds = (performance.now() - t0) / 1000;
clearInterval(timer);
sample();
console.log(JSON.stringify({ phase, ...out, seconds, peakRssMiB: mib(peakRss), peakHeapMiB: mib(peakHeap), heapAtStartMiB: mib(heapAtStart), heapAlongMiB: heapAlong }));
