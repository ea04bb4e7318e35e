import { hash } from 'node:crypto';
import type { QuantityRecord } from '../../../commands/ingestion/records.js';
import type { Doc, Filter } from '../../../src/readstore/readStore.js';
import { canonicalIsoMs } from '../../../src/shared/isoInstant.js';
import { dateOfDayNumber, pad2, type RecordDocBase } from '../recordDoc.js';
import { packObjects, type PackedObjects, sameEntries, unpackObjects } from './packedFields.js';
import { packUuids, UUID_TEXT, uuidText } from './uuidColumn.js';

/** A stored quantity sample, as the per-sample rows had it and decodeBlock answers it (also exported by samplesProjection.ts). */
export type SampleDoc = Omit<QuantityRecord, 'kind'> & RecordDocBase;

/** One doc per block of quantity samples (docs/sample-blocks.md). */
export const SAMPLE_BLOCKS = 'sample_blocks';
/** The samples' locators, packed (packedLocators.ts): a record key's id (key rows) and an id's block family (id rows). */
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
  /**
   * How many of its samples the merged view lists (`hidden` not true; listedCount): a reader of the
   * merged view skips a block with none (the hidden source's blocks) without reading its `data`.
   */
  listed: number;
  data: string;
};

/** A block's `listed`: its samples whose `hidden` is not true. */
export const listedCount = (samples: readonly SampleDoc[]): number => {
  let n = 0;
  for (const s of samples) if (s.hidden !== true) n++;
  return n;
};

/**
 * A sample's locator as one value (recentLocators.ts `storedLocators`, the digests and tests):
 * `_id` is `locatorId(user, record key)` (the user's tag and the key's first characters), `id` the
 * sample's integer id, `block` its block family (its blocks' `_id` without the cut's `.n`). Stored
 * packed, never as such a row (packedLocators.ts, docs/sample-blocks.md "Layout").
 */
export type SampleKeyDoc = Doc & { provider: string; id: number; block: string };

/** Characters of a locator's user tag: 72 bits of SHA-256, collisions need about 2^36 users. */
export const USER_TAG = 12;
let tagOf = '';
let tagValue = '';
/** The user tag every locator `_id` of the user starts with (base64url, fixed length). */
export const userTag = (userId: string): string => {
  if (userId !== tagOf) {
    tagValue = hash('sha256', `locator\u0000${userId}`, 'base64url').slice(0, USER_TAG);
    tagOf = userId;
  }
  return tagValue;
};
/**
 * Characters of the record key a locator keeps. The key (22 characters, 128 bits: recordIds.ts)
 * is unique over the store; after the user's tag a locator needs it unique among one user's
 * records, which 96 bits are (collisions need about 2^48 records of one user; a block's `_id` is
 * unique by 96 bits over the whole store). Six bytes less in the row and in its key index.
 */
const LOCATOR_KEY = 16;
/** The locator `_id` of a sample: its user's tag, then the first LOCATOR_KEY characters of its record key. */
export const locatorId = (userId: string, key: string): string => userTag(userId) + key.slice(0, LOCATOR_KEY);
/**
 * The user's locators: the `_id`s that start with the user's tag. The tag has a fixed length and
 * every character of a locator `_id` (base64url) sorts before `~`, so the range holds exactly them.
 */
export const userLocators = (userId: string): Filter => {
  const tag = userTag(userId);
  return { _id: { $gte: tag, $lt: `${tag}~` } };
};

/**
 * The packed samples (a JSON string: one layout for SQLite's text column and MongoDB's string,
 * and JSON.parse is the fastest decoder JavaScript has). Columnar:
 * - `o`: the field names in the order the first sample has them (decoded docs keep that order);
 * - `s`: start instants (ms) as the first then deltas, `e`: end minus start (absent when every
 *   sample is an instant), `i`: ids as the first then deltas, when every start/end is the
 *   canonical `toISOString()` form (else `S`/`E`: the strings);
 * - `k`: the record keys (`_id`), concatenated when all are 22 characters long (recordKey), else an array;
 * - `c`: fields with one value in every sample (provenance, unit, tenant, ingestion time), once;
 * - `f`: the other fields, one array each; `a`: field → indexes of the samples that lack it
 *   (absent is not null: a row stored without a field reads back without it);
 * - `g`: a field of `f` whose values are all plain objects with the same keys in the same order
 *   (a sample's `metadata`: a HealthKit line's time zone, original value and unit), packed by key
 *   the same way instead: `o` its keys, `c` the keys of one value in every sample, `f` the others'
 *   arrays. As an array of objects it repeated every key and constant in every sample (105 of a
 *   block's 182 bytes per sample in the 1M ingest, BENCHMARKS.md, issue 38, H15-D);
 * - `x`: `external_id` when every sample's is a UUID in one case (HealthKit's: upper case, `U`
 *   set), as the UUIDs' bytes one after the other in one base64url string (about 21 characters a
 *   sample where the quoted UUIDs were 39: half a block's `data` in the 1M ingest, issue 38);
 *   decoded to the very text each sample had. Any other ids stay in `c`/`f` as written.
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
  g?: Record<string, PackedObjects>;
  x?: string;
  U?: 1;
};

const KEY_LENGTH = 22;
/** Fields with a column of their own in Packed, not in `c`/`f`. */
const OWN = new Set(['start_date', 'end_date', 'id', '_id']);

/** The order blocks keep their samples in, and decodeBlock answers them in. */
export const bySampleStart = (a: SampleDoc, b: SampleDoc): number => (a.start_date < b.start_date ? -1 : a.start_date > b.start_date ? 1 : a.id - b.id);

const DAY_MS = 86_400_000;
let isoDay = NaN;
let isoPrefix = '';

/**
 * `new Date(ms).toISOString()` by arithmetic, the date part kept from the last call (a block's
 * samples share their day): a page decodes thousands of times, and a Date per time cost most of
 * a block's decoding (profiled on the page of 1,000).
 */
export function isoOf(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  if (day !== isoDay) {
    const date = dateOfDayNumber(day);
    if (date.length !== 10) return new Date(ms).toISOString();
    isoDay = day;
    isoPrefix = `${date}T`;
  }
  let r = ms - day * DAY_MS;
  const milli = r % 1000;
  r = (r - milli) / 1000;
  const sec = r % 60;
  r = (r - sec) / 60;
  const min = r % 60;
  const iso = `${isoPrefix}${pad2((r - min) / 60)}:${pad2(min)}:${pad2(sec)}.${milli < 10 ? `00${milli}` : milli < 100 ? `0${milli}` : milli}Z`;
  // The template is a tree of V8 cons strings (about 330 bytes of heap); reading a character
  // flattens it into one string of 24 (about 50 bytes once the collector drops the tree). Decoded
  // samples are kept between the projection's batches (decodedBlocks.ts), and two such trees per
  // sample were over half of a kept sample's heap (issue 38, BENCHMARKS.md "the 1M ingest's peak RSS").
  iso.charCodeAt(0);
  return iso;
}

/** `HH:MM:` of each minute of a day, `SS.` of each second, `mmmZ"` of each millisecond: the pieces of pushIsoJson, made once. */
const MINUTE_TEXT: string[] = [];
const SECOND_TEXT = Array.from({ length: 60 }, (_, s) => `${pad2(s)}.`);
const MILLI_TEXT = Array.from({ length: 1000 }, (_, m) => `${String(m).padStart(3, '0')}Z"`);
let jsonDay = NaN;
let jsonPrefix = '';

/**
 * The JSON of `isoOf(ms)` (the text in quotes: a canonical instant needs no escapes) pushed onto
 * `out` as four pieces, none of them made for this instant: `"YYYY-MM-DDT` (kept from the last
 * call), `HH:MM:`, `SS.`, `mmmZ"`. A page of 1,000 samples writes 2,000 instants; as strings each
 * was a chain of half a dozen short-lived strings (profiled: a large share of the page's garbage).
 */
export function pushIsoJson(ms: number, out: string[]): void {
  const day = Math.floor(ms / DAY_MS);
  if (day !== jsonDay) {
    const date = dateOfDayNumber(day);
    if (date.length !== 10) {
      out.push(JSON.stringify(new Date(ms).toISOString()));
      return;
    }
    jsonDay = day;
    jsonPrefix = `"${date}T`;
  }
  const r = ms - day * DAY_MS;
  const milli = r % 1000;
  const secs = (r - milli) / 1000;
  const sec = secs % 60;
  const minute = (secs - sec) / 60;
  out.push(jsonPrefix, (MINUTE_TEXT[minute] ??= `${pad2(Math.floor(minute / 60))}:${pad2(minute % 60)}:`), SECOND_TEXT[sec]!, MILLI_TEXT[milli]!);
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
  for (const d of docs) {
    // Samples of one shape list their fields in one order: a field at its place in `order` is
    // seen already, and only the others are looked up.
    let at = 0;
    for (const f in d) {
      if (f === order[at]) {
        at++;
        continue;
      }
      if (!seen.has(f) && d[f] !== undefined) seen.add(f), order.push(f);
    }
  }

  const packed: Packed = { o: order, i: [], k: '', c: {}, f: {} };
  const starts = new Array<number>(n);
  const ends = new Array<number>(n);
  for (let j = 0; j < n; j++) {
    const d = docs[j]!;
    // An instant's end is its start: read once.
    starts[j] = canonicalIsoMs(d.start_date);
    ends[j] = d.end_date === d.start_date && typeof d.start_date === 'string' ? starts[j]! : canonicalIsoMs(d.end_date);
  }
  const timed = starts.every((ms, j) => !Number.isNaN(ms) && !Number.isNaN(ends[j]!));
  if (timed) {
    packed.s = starts.map((ms, j) => (j === 0 ? ms : ms - starts[j - 1]!));
    const lengths = ends.map((ms, j) => ms - starts[j]!);
    // A block of instants (a day of heart rate: end = start) has no `e`: two bytes a sample.
    if (lengths.some((ms) => ms !== 0)) packed.e = lengths;
  } else {
    packed.S = docs.map((d) => d.start_date as string);
    packed.E = docs.map((d) => d.end_date as string);
  }
  packed.i = docs.map((d, j) => (j === 0 ? (d.id as number) : (d.id as number) - (docs[j - 1]!.id as number)));
  const keys = docs.map((d) => d._id as string);
  packed.k = keys.every((k) => k.length === KEY_LENGTH) ? keys.join('') : keys;

  const absent: Record<string, number[]> = {};
  for (const field of order) {
    // One pass over the field: the samples lacking it, and whether it is constant (constantField).
    const first = docs[0]![field];
    let constant = first !== undefined;
    let firstJson: string | null = null;
    for (let j = 0; j < n; j++) {
      const v = docs[j]![field];
      if (v === undefined) {
        (absent[field] ??= []).push(j);
        constant = false;
      } else if (constant && v !== first) {
        if (v === null || first === null || typeof v !== 'object' || typeof first !== 'object') constant = false;
        else if (!sameEntries(v, first)) {
          firstJson ??= JSON.stringify(first);
          constant = JSON.stringify(v) === firstJson;
        }
      }
    }
    if (OWN.has(field)) continue;
    if (constant) packed.c[field] = first;
    else {
      const values = docs.map((d) => (d[field] === undefined ? null : d[field]));
      const uuids = field === 'external_id' && !absent[field] ? packUuids(values) : null;
      if (uuids) {
        packed.x = uuids.x;
        if (uuids.upper) packed.U = 1;
        continue;
      }
      const objects = absent[field] ? null : packObjects(values);
      if (objects) (packed.g ??= {})[field] = objects;
      else packed.f[field] = values;
    }
  }
  if (Object.keys(absent).length) packed.a = absent;
  return JSON.stringify(packed);
}

/**
 * A block's samples column by column, each sample's doc built only when asked for: a reader that
 * orders, filters or cuts a page on start, id or a flag decodes only the samples it answers.
 * Indexes are positions in the block's (start_date, id) order, 0 to n - 1.
 */
export type BlockColumns = {
  n: number;
  start: (j: number) => string;
  /** Start instants (epoch ms) by index, when the block stores its starts as instants (every start canonical, see isoOf), else null. */
  startMs: readonly number[] | null;
  id: (j: number) => number;
  key: (j: number) => string;
  /** The sample's value of any other field (undefined where the sample lacks it). */
  field: (name: string, j: number) => unknown;
  /**
   * JSON.stringify of field(name, j) pushed onto `out` (maybe as several pieces: an instant's, by
   * pushIsoJson), or false, nothing pushed, where the sample lacks the field.
   */
  writeJson: (name: string, j: number, out: string[]) => boolean;
  /** True when every sample of the block holds one value of the field (stored once in `c`, or absent from all). */
  constant: (name: string) => boolean;
  /** The whole sample, as decodeBlock answers it. */
  doc: (j: number) => SampleDoc;
};

/**
 * blockColumns of a block's `data`. A value stored once for the whole block (`c`: metadata,
 * quality, provenance) is one object shared by its samples: readers and the projection never
 * change a decoded sample's nested values (the projection sets top-level flags only).
 */
export function blockColumns(data: string): BlockColumns {
  const p = JSON.parse(data) as Packed;
  const n = p.i.length;
  // Fields packed by key become arrays of objects again: every reader below reads `f` alone.
  if (p.g) for (const f in p.g) p.f[f] = unpackObjects(p.g[f]!, n);
  const ids = new Array<number>(n);
  for (let j = 0, id = 0; j < n; j++) ids[j] = id = j === 0 ? p.i[0]! : id + p.i[j]!;
  const startMs = p.s ? new Array<number>(n) : null;
  if (startMs) for (let j = 0, t = 0; j < n; j++) startMs[j] = t = j === 0 ? p.s![0]! : t + p.s![j]!;
  const start = startMs ? (j: number) => isoOf(startMs[j]!) : (j: number) => p.S![j]!;
  // No `e` with `s`: every sample an instant.
  const lengths = p.e ?? null;
  const endMs = (j: number) => (lengths ? startMs![j]! + lengths[j]! : startMs![j]!);
  const end = startMs ? (j: number) => isoOf(endMs(j)) : (j: number) => p.E![j]!;
  const keys = p.k;
  const key = typeof keys === 'string' ? (j: number) => keys.slice(j * KEY_LENGTH, (j + 1) * KEY_LENGTH) : (j: number) => keys[j]!;
  const absent = p.a ? new Map(Object.entries(p.a).map(([f, js]) => [f, new Set(js)])) : null;
  // `external_id` packed as UUIDs (`x`): every sample has one; the block's text is made on the first read.
  const packedUuids = p.x;
  let uuids: string | null = null;
  const externalId = (j: number): string => (uuids ??= uuidText(packedUuids!, p.U === 1)).slice(j * UUID_TEXT, (j + 1) * UUID_TEXT);
  // Every sample starts as a copy of one object with the fields in their order (constants set):
  // a spread of it is one allocation with the final shape, where setting field by field on `{}`
  // re-shaped each sample.
  const proto: Record<string, unknown> = {};
  const varying: string[] = [];
  for (const f of p.o) {
    if (OWN.has(f) || (packedUuids !== undefined && f === 'external_id')) proto[f] = null;
    else if (Object.hasOwn(p.c, f)) proto[f] = p.c[f];
    else {
      proto[f] = null;
      varying.push(f);
    }
  }
  const columns = varying.map((f) => p.f[f]!);
  const field = (name: string, j: number): unknown => {
    if (absent?.get(name)?.has(j)) return undefined;
    switch (name) {
      case 'start_date':
        return start(j);
      case 'end_date':
        return end(j);
      case 'id':
        return ids[j];
      case '_id':
        return key(j);
      case 'external_id':
        if (packedUuids !== undefined) return externalId(j);
    }
    return Object.hasOwn(p.c, name) ? p.c[name] : p.f[name]?.[j];
  };
  const doc = (j: number): SampleDoc => {
    const d: Record<string, unknown> = { ...proto };
    d.start_date = start(j);
    // An instant (most samples of a day's series: end = start) is one string for both fields.
    d.end_date = startMs && (!lengths || lengths[j] === 0) ? d.start_date : end(j);
    d.id = ids[j];
    d._id = key(j);
    if (packedUuids !== undefined) d.external_id = externalId(j);
    for (let v = 0; v < varying.length; v++) d[varying[v]!] = columns[v]![j];
    // Rare (a row stored without a field): removed after, so the common samples keep one shape.
    if (absent) for (const [f, js] of absent) if (js.has(j)) delete d[f];
    return d as SampleDoc;
  };
  const writeJson = (name: string, j: number, out: string[]): boolean => {
    if (absent?.get(name)?.has(j)) return false;
    if (startMs && name === 'start_date') pushIsoJson(startMs[j]!, out);
    else if (startMs && name === 'end_date') pushIsoJson(endMs(j), out);
    else {
      const v = field(name, j);
      if (v === undefined) return false;
      out.push(JSON.stringify(v));
    }
    return true;
  };
  const present = new Set(p.o);
  const constant = (name: string) => Object.hasOwn(p.c, name) || !present.has(name);
  return { n, start, startMs, id: (j) => ids[j]!, key, field, writeJson, constant, doc };
}

/** A block's samples (its `data`) as the rows of the per-sample model had them (every field), sorted by (start_date, id). */
export function decodeBlock(data: string): SampleDoc[] {
  const block = blockColumns(data);
  const out: SampleDoc[] = new Array(block.n);
  for (let j = 0; j < block.n; j++) out[j] = block.doc(j);
  return out;
}
