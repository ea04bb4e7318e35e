import type { QuantityRecord } from '../../../commands/ingestion/records.js';
import type { Doc } from '../../../src/readstore/readStore.js';
import type { RecordDocBase } from '../recordDoc.js';

/** A stored quantity sample, as the per-sample rows had it and decodeBlock answers it (also exported by samplesProjection.ts). */
export type SampleDoc = Omit<QuantityRecord, 'kind'> & RecordDocBase;

/** One doc per block of quantity samples (docs/sample-blocks.md). */
export const SAMPLE_BLOCKS = 'sample_blocks';
/** One small row per sample: where a sample with a given record key (and integer id) is stored. */
export const SAMPLE_KEYS = 'sample_keys';
/** The most samples one block holds: a day with more is cut into several blocks of one key. */
export const BLOCK_SAMPLES = 1000;

/**
 * A block: the samples of one (user, type, provider, source, UTC day of start_date), at most
 * BLOCK_SAMPLES, its key fields as plain fields (the store filters and indexes them) and its
 * samples packed into `data` (encodeBlock).
 */
export type SampleBlockDoc = Doc & {
  user_id: string;
  tenant_id: string;
  type: string;
  provider: string;
  source: string;
  /** UTC date (YYYY-MM-DD) of every sample's start_date. */
  day: string;
  /** start_date of the first and the last sample (ISO strings, as the samples carry them). */
  start_min: string;
  start_max: string;
  count: number;
  data: string;
};

/** A sample_keys row: `_id` is the record key, `id` the sample's integer id, `block` its block's `_id`. */
export type SampleKeyDoc = Doc & { user_id: string; provider: string; id: number; block: string };

/**
 * The packed samples (a JSON string: one layout for SQLite's text column and MongoDB's string,
 * and JSON.parse is the fastest decoder JavaScript has). Columnar:
 * - `o`: the field names in the order the first sample has them (decoded docs keep that order);
 * - `s`: start instants (ms) as the first then deltas, `e`: end minus start, `i`: ids as the
 *   first then deltas, when every start/end is the canonical `toISOString()` form (else `S`/`E`:
 *   the strings);
 * - `k`: the record keys (`_id`), concatenated when all are 22 characters long (recordKey), else an array;
 * - `c`: fields with one value in every sample (provenance, unit, tenant, ingestion time), once;
 * - `f`: the other fields, one array each; `a`: field → indexes of the samples that lack it
 *   (absent is not null: a row stored without a field reads back without it).
 */
type Packed = {
  o: string[];
  s?: number[];
  e?: number[];
  S?: string[];
  E?: string[];
  i: number[];
  k: string | string[];
  c: Record<string, unknown>;
  f: Record<string, unknown[]>;
  a?: Record<string, number[]>;
};

const KEY_LENGTH = 22;
/** Fields with a column of their own in Packed, not in `c`/`f`. */
const OWN = new Set(['start_date', 'end_date', 'id', '_id']);

/** The order blocks keep their samples in, and decodeBlock answers them in. */
export const bySampleStart = (a: SampleDoc, b: SampleDoc): number => (a.start_date < b.start_date ? -1 : a.start_date > b.start_date ? 1 : a.id - b.id);

/** Epoch ms of an ISO time when the time is exactly what toISOString writes for it, else NaN. */
function canonicalMs(iso: unknown): number {
  if (typeof iso !== 'string' || iso.length !== 24) return NaN;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) && new Date(ms).toISOString() === iso ? ms : NaN;
}

/** Equal as JSON values (a constant column holds one value for all; arrays and objects compare by content). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Packs samples (already sorted by bySampleStart, as blocks keep them) into a block's `data`.
 * Every field of every sample reads back from decodeBlock as it was: numbers exactly, nulls as
 * nulls, absent fields absent.
 */
export function encodeBlock(samples: readonly SampleDoc[]): string {
  const n = samples.length;
  const docs = samples as unknown as readonly Record<string, unknown>[];
  const order: string[] = [];
  const seen = new Set<string>();
  for (const d of docs) for (const f in d) if (!seen.has(f) && d[f] !== undefined) seen.add(f), order.push(f);

  const packed: Packed = { o: order, i: [], k: '', c: {}, f: {} };
  const starts = docs.map((d) => canonicalMs(d.start_date));
  const ends = docs.map((d) => canonicalMs(d.end_date));
  const timed = starts.every((ms, j) => !Number.isNaN(ms) && !Number.isNaN(ends[j]!));
  if (timed) {
    packed.s = starts.map((ms, j) => (j === 0 ? ms : ms - starts[j - 1]!));
    packed.e = ends.map((ms, j) => ms - starts[j]!);
  } else {
    packed.S = docs.map((d) => d.start_date as string);
    packed.E = docs.map((d) => d.end_date as string);
  }
  packed.i = docs.map((d, j) => (j === 0 ? (d.id as number) : (d.id as number) - (docs[j - 1]!.id as number)));
  const keys = docs.map((d) => d._id as string);
  packed.k = keys.every((k) => k.length === KEY_LENGTH) ? keys.join('') : keys;

  const absent: Record<string, number[]> = {};
  for (const field of order) {
    for (let j = 0; j < n; j++) if (docs[j]![field] === undefined) (absent[field] ??= []).push(j);
    if (OWN.has(field)) continue;
    const first = docs[0]![field];
    let constant = !absent[field];
    for (let j = 1; constant && j < n; j++) constant = sameValue(docs[j]![field], first);
    if (constant) packed.c[field] = first;
    else packed.f[field] = docs.map((d) => (d[field] === undefined ? null : d[field]));
  }
  if (Object.keys(absent).length) packed.a = absent;
  return JSON.stringify(packed);
}

/** The block's samples as the rows of the per-sample model had them (every field), sorted by (start_date, id). */
export function decodeBlock(doc: Pick<SampleBlockDoc, 'data'>): SampleDoc[] {
  return decodeData(doc.data);
}

/** decodeBlock of a block's `data` alone. */
export function decodeData(data: string): SampleDoc[] {
  const p = JSON.parse(data) as Packed;
  const n = p.i.length;
  const out: SampleDoc[] = new Array(n);
  const keyAt = typeof p.k === 'string' ? (j: number) => (p.k as string).slice(j * KEY_LENGTH, (j + 1) * KEY_LENGTH) : (j: number) => (p.k as string[])[j]!;
  const absent = p.a ? new Map(Object.entries(p.a).map(([f, js]) => [f, new Set(js)])) : null;
  let start = 0;
  let id = 0;
  for (let j = 0; j < n; j++) {
    id = j === 0 ? p.i[0]! : id + p.i[j]!;
    let startIso: string;
    let endIso: string;
    if (p.s) {
      start = j === 0 ? p.s[0]! : start + p.s[j]!;
      startIso = new Date(start).toISOString();
      endIso = new Date(start + p.e![j]!).toISOString();
    } else {
      startIso = p.S![j]!;
      endIso = p.E![j]!;
    }
    const d: Record<string, unknown> = {};
    for (const field of p.o) {
      if (absent?.get(field)?.has(j)) continue;
      switch (field) {
        case 'start_date':
          d[field] = startIso;
          break;
        case 'end_date':
          d[field] = endIso;
          break;
        case 'id':
          d[field] = id;
          break;
        case '_id':
          d[field] = keyAt(j);
          break;
        default:
          // A constant object is one value for all samples: each doc gets its own copy, so a
          // reader changing one sample's metadata does not change its neighbours'.
          d[field] = field in p.c ? copyOf(p.c[field]) : p.f[field]![j];
      }
    }
    out[j] = d as SampleDoc;
  }
  return out;
}

const copyOf = (v: unknown): unknown => (v !== null && typeof v === 'object' ? structuredClone(v) : v);
