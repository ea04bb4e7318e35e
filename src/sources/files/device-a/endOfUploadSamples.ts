import { heavierFlow } from '../../derivations/menstrualCycles.js';
import { nightRuns } from '../../derivations/sleepSessions.js';

/**
 * What an upload keeps of its sleep-analysis and menstrual-flow samples for the records built at
 * its end (sleep sessions, menstrual cycles: nightsAndCycles.ts). An export holds years of them
 * and the whole upload must be seen first (export.xml is in document order, grouped by type, not
 * sorted by date across types), so they are kept compactly: sleep samples as columns of typed
 * arrays growing by doubling, their ids as bytes, their provenances, phases and time zones each
 * stored once and numbered; flow samples reduced as they come to the one flow a day keeps.
 */

/** A sample's provenance (upload.ts `Prov`): grouped by `key`, never by identity. */
type Keyed = { key: string };

/** A sleep-analysis sample as the night builder reads it. */
export type SleepMember<P extends Keyed = Keyed> = { group: string; prov: P; start: number; end: number; id: string; value: string; tz: string | null };

type Column = Float64Array | Uint32Array | Uint8Array;

/** `a`, or a copy of it at least `need` long: lengths double, so n additions copy O(n) in all. */
function atLeast<T extends Column>(a: T, need: number): T {
  if (need <= a.length) return a;
  let n = a.length * 2;
  while (n < need) n *= 2;
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

/** Distinct values numbered in the order first seen: a sample stores the number. */
class Numbered<K, V> {
  private readonly numbers = new Map<K, number>();
  readonly values: V[] = [];
  numberOf(key: K, value: () => V): number {
    let n = this.numbers.get(key);
    if (n === undefined) {
      n = this.values.length;
      this.values.push(value());
      this.numbers.set(key, n);
    }
    return n;
  }
}

const INITIAL = 256;

/** FNV-1a over the UTF-16 code units, and whether every unit fits a byte. */
function hashOf(s: string): { hash: number; narrow: boolean } {
  let h = 0x811c9dc5;
  let narrow = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) narrow = false;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return { hash: h >>> 0, narrow };
}

/**
 * The sleep samples of one upload, each id once (a sample sent twice counts once in its night),
 * about 110 bytes a sample with a 41-character id, where a list of objects and a Set took about
 * 310 (docs/memory.md).
 */
export class SleepSamples<P extends Keyed> {
  private count = 0;
  private start = new Float64Array(INITIAL);
  private end = new Float64Array(INITIAL);
  private group = new Uint32Array(INITIAL);
  private phase = new Uint8Array(INITIAL);
  private zone = new Uint32Array(INITIAL);
  private hash = new Uint32Array(INITIAL);
  /** Sample i's id is idBytes[idFrom[i], idFrom[i + 1]) as Latin-1, unless it is one of `wideIds`. */
  private idFrom = new Float64Array(INITIAL + 1);
  private idBytes = new Uint8Array(INITIAL * 40);
  /** Ids with a code unit beyond Latin-1 (never sent by HealthKit or the export): kept as strings. */
  private readonly wideIds = new Map<number, string>();
  /** Open addressing by id hash: sample index + 1, 0 for free; at most half full. */
  private slots = new Uint32Array(INITIAL * 2);
  /** Sources in order of their first sample: the nights come source by source in that order. */
  private readonly provs = new Numbered<string, P>();
  private readonly phases = new Numbered<string, string>();
  private readonly zones = new Numbered<string | null, string | null>();

  get size(): number {
    return this.count;
  }

  /** Keeps a sample unless one with its id was kept before; false for a repeat. */
  add(prov: P, start: number, end: number, id: string, value: string, tz: string | null): boolean {
    const { hash, narrow } = hashOf(id);
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (let s = this.slots[slot]!; s !== 0; s = this.slots[slot]!) {
      if (this.hash[s - 1] === hash && this.idIs(s - 1, id, narrow)) return false;
      slot = (slot + 1) & mask;
    }
    const i = this.count++;
    this.ensure(this.count, narrow ? id.length : 0);
    this.start[i] = start;
    this.end[i] = end;
    this.group[i] = this.provs.numberOf(prov.key, () => prov);
    this.phase[i] = this.phases.numberOf(value, () => value);
    this.zone[i] = this.zones.numberOf(tz, () => tz);
    this.hash[i] = hash;
    const from = this.idFrom[i]!;
    if (narrow) for (let k = 0; k < id.length; k++) this.idBytes[from + k] = id.charCodeAt(k);
    else this.wideIds.set(i, id);
    this.idFrom[i + 1] = from + (narrow ? id.length : 0);
    if (this.count * 2 > this.slots.length) this.rehash();
    else this.slots[slot] = i + 1;
    return true;
  }

  /** The sample's id as it was sent. */
  idOf(i: number): string {
    const wide = this.wideIds.get(i);
    if (wide !== undefined) return wide;
    const from = this.idFrom[i]!;
    return Buffer.from(this.idBytes.buffer, this.idBytes.byteOffset + from, this.idFrom[i + 1]! - from).toString('latin1');
  }

  /** Sample i as the night builder reads it. */
  memberOf(i: number): SleepMember<P> {
    const prov = this.provs.values[this.group[i]!]!;
    return { group: prov.key, prov, start: this.start[i]!, end: this.end[i]!, id: this.idOf(i), value: this.phases.values[this.phase[i]!]!, tz: this.zones.values[this.zone[i]!]! };
  }

  /**
   * The nights of each source, as derivations/sleepSessions.ts `sleepNights` cuts them from a
   * list: its samples in time order (start, then end, then id), cut by `nightRuns`. Source by
   * source in the order of their first sample, each in time order; a night is the sample numbers
   * of `order` from `from` to `to`.
   */
  nights(gapMs: number): { order: Uint32Array; nights: { from: number; to: number }[] } {
    const n = this.count;
    const groups = this.provs.values.length;
    // Counting sort by source keeps each source's samples in the order they came.
    const firstOf = new Float64Array(groups + 1);
    for (let i = 0; i < n; i++) firstOf[this.group[i]! + 1]!++;
    for (let g = 0; g < groups; g++) firstOf[g + 1]! += firstOf[g]!;
    const next = firstOf.slice(0, groups);
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[next[this.group[i]!]!++] = i;
    const { start, end } = this;
    // Ids are distinct (a repeat is never kept): the order is total, as a sort by object would find it.
    const inTimeOrder = (a: number, b: number) => start[a]! - start[b]! || end[a]! - end[b]! || (a === b ? 0 : this.idOf(a) < this.idOf(b) ? -1 : 1);
    const nights: { from: number; to: number }[] = [];
    for (let g = 0; g < groups; g++) {
      const from = firstOf[g]!;
      const to = firstOf[g + 1]!;
      order.subarray(from, to).sort(inTimeOrder);
      const at = (k: number) => order[from + k]!;
      for (const run of nightRuns(to - from, (k) => start[at(k)]!, (k) => end[at(k)]!, gapMs)) nights.push({ from: from + run.from, to: from + run.to });
    }
    return { order, nights };
  }

  private idIs(i: number, id: string, narrow: boolean): boolean {
    const wide = this.wideIds.get(i);
    if (wide !== undefined || !narrow) return wide === id;
    const from = this.idFrom[i]!;
    if (this.idFrom[i + 1]! - from !== id.length) return false;
    for (let k = 0; k < id.length; k++) if (this.idBytes[from + k] !== id.charCodeAt(k)) return false;
    return true;
  }

  private ensure(count: number, idLength: number): void {
    if (count > this.start.length) {
      this.start = atLeast(this.start, count);
      this.end = atLeast(this.end, count);
      this.group = atLeast(this.group, count);
      this.phase = atLeast(this.phase, count);
      this.zone = atLeast(this.zone, count);
      this.hash = atLeast(this.hash, count);
      this.idFrom = atLeast(this.idFrom, this.start.length + 1);
    }
    this.idBytes = atLeast(this.idBytes, this.idFrom[count - 1]! + idLength);
  }

  /** The table doubled, every sample placed again by its stored hash. */
  private rehash(): void {
    const slots = new Uint32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let i = 0; i < this.count; i++) {
      let slot = this.hash[i]! & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = i + 1;
    }
    this.slots = slots;
  }
}

/** The flow a day keeps: the heaviest of its samples, the first of them on a tie. */
export type FlowDay = { value: string; tz: string | null };

/** A source's flow days, by local date. */
export type FlowSource<P extends Keyed> = { prov: P; days: Map<string, FlowDay> };

/**
 * The menstrual-flow samples of one upload reduced as they come: per source, in the order of its
 * first sample, the flow each local date keeps. At most one entry per source and day, however
 * many samples a day has.
 */
export class FlowDays<P extends Keyed> {
  private readonly sources = new Map<string, FlowSource<P>>();

  add(prov: P, date: string, value: string, tz: string | null): void {
    let source = this.sources.get(prov.key);
    if (!source) this.sources.set(prov.key, (source = { prov, days: new Map() }));
    if (heavierFlow(value, source.days.get(date)?.value)) source.days.set(date, { value, tz });
  }

  bySource(): IterableIterator<FlowSource<P>> {
    return this.sources.values();
  }
}
