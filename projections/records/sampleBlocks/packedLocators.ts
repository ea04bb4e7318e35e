import { hash } from 'node:crypto';
import type { Change, Doc, ReadStore } from '../../../src/readstore/readStore.js';
import { SAMPLE_KEYS, USER_TAG, userTag } from './sampleBlock.js';

/**
 * `sample_keys`, the samples' locators packed many to a row (issue 38, h19/locators;
 * docs/sample-blocks.md "Layout"). Two kinds of rows, both within the user's `_id` range (the
 * user's tag first: an erasure deletes the range, with `provider` for a provider's erasure):
 *
 * - **key rows** (`<tag>k<provider tag><first key>`): one (user, provider)'s record keys in order,
 *   each with the sample's integer id, at most KEY_ROW locators a row. A record's key and id never
 *   change while it is stored (a record sent again keeps its first id), so a key row is written
 *   only when the recent tier is merged into it (recentLocators.ts), in key order, a slice of the
 *   key space at a time; a row never spans two slices.
 * - **id rows** (`<tag>i<sequence><provider tag>`): for one (user, provider) and one storing event
 *   (the id's `floor(id / 10000)`, recordIds.ts), each record's **block family**: the
 *   `<series hash>.<day>` its blocks' `_id`s start with (the cut's `.n` left out). Written when a
 *   record is first stored or moves to another family; never when the cut only moves samples
 *   between blocks of one day, which was most of the locators a live batch wrote.
 *
 * Why: a row per sample and its random-key index were ~135 B a sample at 1M samples; packed, a
 * locator is its key (16 characters) and id (4-5) in a key row and about two bytes in an id row.
 */

/** The most locators a key row holds: about 21 KB. A merge rewrites the rows of the slices it touches. */
export const KEY_ROW = 1000;
/** Characters of a key row's locator key (locatorId's after the user's tag). */
const KEY = 16;

/** base64url's characters in code-unit order: a key's first character's rank in it picks its merge slice. */
const SORTED = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_';
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < DIGITS.length; i++) DIGIT[DIGITS.charCodeAt(i)] = i;

/** The slice (of `slices`) a locator `_id` (tag + key) belongs to: contiguous ranges of its key's first character, so that a slice is a range of every (user, provider)'s key rows. */
export const sliceOf = (locator: string, slices: number): number => Math.floor((SORTED.indexOf(locator[USER_TAG]!) * slices) / SORTED.length);
/** The first key character of slice `s`, and the one after its last (or `~`, after every key). */
const sliceBounds = (s: number, slices: number): [string, string] => {
  const lo = Math.ceil((s * SORTED.length) / slices);
  const hi = Math.ceil(((s + 1) * SORTED.length) / slices);
  return [SORTED[lo]!, hi >= SORTED.length ? '~' : SORTED[hi]!];
};

let providerOf = '';
let providerTagValue = '';
/** 8 characters of SHA-256 of the provider: a (user, provider)'s rows are one range of `_id`s. */
export const providerTag = (provider: string): string => {
  if (provider !== providerOf) {
    providerTagValue = hash('sha256', `provider\u0000${provider}`, 'base64url').slice(0, 8);
    providerOf = provider;
  }
  return providerTagValue;
};

const keyPrefix = (tag: string, provider: string): string => `${tag}k${providerTag(provider)}`;
/** A sequence in 12 digits: ids stay below 2^53, so sequences below 10^12 (recordIds.ts). */
const seqOf = (id: number): string => String(Math.floor(id / 10_000)).padStart(12, '0');
export const idRowId = (tag: string, provider: string, id: number): string => `${tag}i${seqOf(id)}${providerTag(provider)}`;
export const isKeyRow = (_id: string): boolean => _id.charCodeAt(USER_TAG) === 107; /* k */

/**
 * A key row: `n` locators, their keys (KEY characters each) concatenated in order, then their ids
 * in `w` digits each (base 64): fixed widths, so a lookup is a binary search of the string
 * without parsing it.
 */
export type KeyRowDoc = Doc & { provider: string; n: number; w: number; data: string };
/** An id row: `f` the families named, `o` the first index (`id % 10000`) it covers, `x` each index's family in `f` (-1: none of this user and provider). */
export type IdRowDoc = Doc & { provider: string; data: string };
type IdRowData = { f: string[]; o: number; x: number[] };

const idDigits = (id: number, w: number): string => {
  let s = '';
  for (let i = 0; i < w; i++) {
    s = DIGITS[id % 64]! + s;
    id = Math.floor(id / 64);
  }
  return s;
};
const widthOf = (id: number): number => {
  let w = 1;
  for (let v = Math.floor(id / 64); v > 0; v = Math.floor(v / 64)) w++;
  return w;
};
function idAt(row: KeyRowDoc, j: number): number {
  const at = row.n * KEY + j * row.w;
  let v = 0;
  for (let i = 0; i < row.w; i++) v = v * 64 + DIGIT[row.data.charCodeAt(at + i)]!;
  return v;
}

/** The id of `key` (a locator's KEY characters) in a key row, or undefined. */
function findInRow(row: KeyRowDoc, key: string): number | undefined {
  let lo = 0;
  let hi = row.n - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = row.data.substr(mid * KEY, KEY);
    if (k === key) return idAt(row, mid);
    if (k < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** The locators of a key row, as (locator `_id`, id) pairs in order. */
export function keyRowEntries(row: KeyRowDoc): { key: string; id: number }[] {
  const tag = row._id.slice(0, USER_TAG);
  const out: { key: string; id: number }[] = new Array(row.n);
  for (let j = 0; j < row.n; j++) out[j] = { key: tag + row.data.substr(j * KEY, KEY), id: idAt(row, j) };
  return out;
}

/**
 * The ids main holds for `wanted` (locator `_id` → its provider): for each, a seek of the key rows'
 * `_id` index for the row of its (user, provider) whose first key is the greatest not after it
 * (rows of one (user, provider) never overlap), its `_id` only; then each row named, once, read
 * whole (about 21 KB) and searched. A batch of records sent again reads each row once, not once per record.
 */
export async function idsInMain(readStore: ReadStore, wanted: ReadonlyMap<string, string>): Promise<Map<string, number>> {
  const rowOf = new Map<string, string>();
  for (const [locator, provider] of wanted) {
    const prefix = keyPrefix(locator.slice(0, USER_TAG), provider);
    const [row] = await readStore.find(SAMPLE_KEYS, { filter: { _id: { $gte: prefix, $lte: prefix + locator.slice(USER_TAG) } }, sort: [['_id', -1]], limit: 1, fields: [] });
    if (row) rowOf.set(locator, row._id);
  }
  const rowIds = [...new Set(rowOf.values())];
  const rows = new Map<string, KeyRowDoc>();
  for (let i = 0; i < rowIds.length; i += 500) for (const r of await readStore.find<KeyRowDoc>(SAMPLE_KEYS, { filter: { _id: { $in: rowIds.slice(i, i + 500) } } })) rows.set(r._id, r);
  const out = new Map<string, number>();
  for (const [locator, rowId] of rowOf) {
    const row = rows.get(rowId);
    const id = row && findInRow(row, locator.slice(USER_TAG));
    if (id !== undefined) out.set(locator, id);
  }
  return out;
}

/**
 * The changes that put `entries` (one (user, provider)'s locators of one slice, sorted by `_id`)
 * into its key rows: the slice's rows read, merged with them (an entry replaces a stored one of
 * the same key), cut again every KEY_ROW, the rows that changed put and the ones left over
 * deleted. Read here (async), applied by the batch that merges the slice.
 */
export async function mergeIntoKeyRows(
  readStore: ReadStore,
  tag: string,
  provider: string,
  slice: number,
  slices: number,
  entries: readonly { key: string; id: number }[],
  written: Map<string, KeyRowDoc | null>,
  out: Change[],
): Promise<void> {
  const prefix = keyPrefix(tag, provider);
  const [lo, hi] = sliceBounds(slice, slices);
  // The store's rows of the range, with those an earlier slice of this batch wrote over them.
  const range = new Map<string, KeyRowDoc | null>();
  for (const r of await readStore.find<KeyRowDoc>(SAMPLE_KEYS, { filter: { _id: { $gte: prefix + lo, $lt: prefix + hi } } })) range.set(r._id, r);
  for (const [id, r] of written) if (id >= prefix + lo && id < prefix + hi) range.set(id, r);
  // The row before the slice, if it reaches into it: only when the slices were cut otherwise when
  // it was written (a merge never writes a row across a slice's bounds), kept so rows never overlap.
  const [floor] = await readStore.find<KeyRowDoc>(SAMPLE_KEYS, { filter: { _id: { $gte: prefix, $lt: prefix + lo } }, sort: [['_id', -1]], limit: 1 });
  const before0 = floor && written.has(floor._id) ? written.get(floor._id)! : floor;
  if (before0 && before0.n && before0.data.substr((before0.n - 1) * KEY, KEY) >= lo) range.set(before0._id, before0);
  const stored: KeyRowDoc[] = [];
  for (const r of range.values()) if (r) stored.push(r);
  stored.sort((a, b) => (a._id < b._id ? -1 : 1));
  const keys: string[] = [];
  const ids: number[] = [];
  let e = 0;
  const push = (k: string, id: number) => {
    keys.push(k);
    ids.push(id);
  };
  for (const row of stored) {
    for (let j = 0; j < row.n; j++) {
      const k = row.data.substr(j * KEY, KEY);
      while (e < entries.length && entries[e]!.key.slice(USER_TAG) < k) push(entries[e]!.key.slice(USER_TAG), entries[e++]!.id);
      if (e < entries.length && entries[e]!.key.slice(USER_TAG) === k) push(k, entries[e++]!.id);
      else push(k, idAt(row, j));
    }
  }
  while (e < entries.length) push(entries[e]!.key.slice(USER_TAG), entries[e++]!.id);
  const before = new Map(stored.map((r) => [r._id, r]));
  for (let at = 0; at < keys.length; at += KEY_ROW) {
    const end = Math.min(at + KEY_ROW, keys.length);
    let w = 1;
    for (let j = at; j < end; j++) w = Math.max(w, widthOf(ids[j]!));
    let data = keys.slice(at, end).join('');
    for (let j = at; j < end; j++) data += idDigits(ids[j]!, w);
    const doc: KeyRowDoc = { _id: prefix + keys[at]!, provider, n: end - at, w, data };
    const old = before.get(doc._id);
    before.delete(doc._id);
    if (old && old.data === data && old.w === w) continue;
    out.push({ op: 'put', collection: SAMPLE_KEYS, doc });
    written.set(doc._id, doc);
  }
  for (const id of before.keys()) {
    out.push({ op: 'delete', collection: SAMPLE_KEYS, id });
    written.set(id, null);
  }
}

/** Every id row, decoded, of the rows `ids` (id row `_id`s) names; absent rows as empty ones. */
export async function readIdRows(readStore: ReadStore, rowIds: readonly string[]): Promise<Map<string, { provider: string | null; data: IdRowData }>> {
  const out = new Map<string, { provider: string | null; data: IdRowData }>();
  for (let i = 0; i < rowIds.length; i += 500) {
    for (const r of await readStore.find<IdRowDoc>(SAMPLE_KEYS, { filter: { _id: { $in: rowIds.slice(i, i + 500) } } })) out.set(r._id, { provider: r.provider, data: JSON.parse(r.data) as IdRowData });
  }
  for (const id of rowIds) if (!out.has(id)) out.set(id, { provider: null, data: { f: [], o: 0, x: [] } });
  return out;
}

/** The family an id row gives `id`, or null. */
export function familyIn(data: IdRowData, id: number): string | null {
  const j = data.x[(id % 10_000) - data.o];
  return j === undefined || j < 0 ? null : data.f[j]!;
}

/** Sets `id`'s family in a decoded id row. */
export function setFamily(data: IdRowData, id: number, family: string): void {
  const index = id % 10_000;
  let f = data.f.indexOf(family);
  if (f < 0) f = data.f.push(family) - 1;
  if (!data.x.length) data.o = index;
  if (index < data.o) {
    data.x = [...new Array<number>(data.o - index).fill(-1), ...data.x];
    data.o = index;
  }
  while (data.x.length <= index - data.o) data.x.push(-1);
  data.x[index - data.o] = f;
}

/** The put of a decoded id row. */
export const idRowPut = (_id: string, provider: string, data: IdRowData): Change => ({ op: 'put', collection: SAMPLE_KEYS, doc: { _id, provider, data: JSON.stringify(data) } satisfies IdRowDoc });

/** The family of a user's sample by its integer id (the id rows of its sequence, every provider's), or null. */
export async function familyOfId(readStore: ReadStore, userId: string, id: number): Promise<string | null> {
  const from = `${userTag(userId)}i${seqOf(id)}`;
  for (const r of await readStore.find<IdRowDoc>(SAMPLE_KEYS, { filter: { _id: { $gte: from, $lt: `${from}~` } } })) {
    const f = familyIn(JSON.parse(r.data) as IdRowData, id);
    if (f !== null) return f;
  }
  return null;
}

/** A block family's `_id` range: `<family>.0`, `<family>.1`, … (`/` follows `.`). */
export const familyBlocks = (family: string) => ({ $gte: `${family}.`, $lt: `${family}/` });

/**
 * main's locators, one user tag at a time: each key row's keys with their ids and provider, and
 * the family the id rows give each id (every stored record's, the tier's too). For storedLocators.
 */
export async function* mainLocatorsByTag(readStore: ReadStore, page = 200): AsyncGenerator<{ tag: string; locators: { _id: string; id: number; provider: string }[]; families: ReadonlyMap<number, string> }> {
  let after: string[] | undefined;
  let tag: string | null = null;
  let keyRows: KeyRowDoc[] = [];
  let families = new Map<number, string>();
  const emit = () => {
    const locators: { _id: string; id: number; provider: string }[] = [];
    for (const row of keyRows) for (const { key, id } of keyRowEntries(row)) locators.push({ _id: key, id, provider: row.provider });
    return { tag: tag!, locators, families };
  };
  for (;;) {
    const rows = await readStore.find<Doc & { provider: string; data: string }>(SAMPLE_KEYS, { sort: [['_id', 1]], limit: page, after });
    for (const row of rows) {
      const t = row._id.slice(0, USER_TAG);
      if (t !== tag) {
        if (tag !== null) yield emit();
        tag = t;
        keyRows = [];
        families = new Map();
      }
      if (isKeyRow(row._id)) keyRows.push(row as KeyRowDoc);
      else {
        const d = JSON.parse(row.data) as IdRowData;
        const base = Number(row._id.slice(USER_TAG + 1, USER_TAG + 13)) * 10_000 + d.o;
        for (let j = 0; j < d.x.length; j++) if (d.x[j]! >= 0) families.set(base + j, d.f[d.x[j]!]!);
      }
    }
    if (rows.length < page) break;
    after = [rows[rows.length - 1]!._id];
  }
  if (tag !== null) yield emit();
}
