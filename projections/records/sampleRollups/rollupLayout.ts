/**
 * The shape of a statistics rollup row: one per user, type, series (provider, source, unit), UTC
 * day and view. Its statistics are the day's 96 quarter hours, packed into one binary field
 * (`quarters`): every UTC offset in use since 1972 is a whole number of quarter hours, so any
 * bucket of any zone (a local day, a local hour) is a run of whole quarters of one or two UTC days,
 * and its count, sum, min and max are those of its quarters added up.
 *
 * Packed rather than one column per group (issue 38): the row of a dense day was some 670 columns
 * (quarters, hours, day prefixes and suffixes), several KiB that spilled into overflow pages and
 * that SQLite walked column by column to reach the groups an answer needed. Reading a row now
 * costs in proportion to its bytes: a day stores only the quarters that hold samples, as float32
 * where every value of the row is exactly one (counts, and the sums and extremes of whole numbers
 * such as heart rates and steps), float64 otherwise. Adding up to 96 quarters per row in
 * JavaScript costs less than reading the precomputed prefixes did.
 *
 * Layout: a bitmap of the quarters that hold samples (bit q of byte q >> 3; 12 bytes), the width
 * of each value in bytes (4 or 8; byte 12), the UTC day as a day number (days since 1970-01-01,
 * signed 24-bit little-endian; bytes 13–15), then for each quarter marked present in ascending
 * order its count, sum, min and max, little-endian. A field is as long as its bitmap and width say
 * and names its day, so fields joined end to end (a series' days read as one value,
 * ReadStore.joinBytes) are read without anything beside them. `count` beside it is the day's count
 * (coverage adds it up where the data is).
 */
export const QUARTERS_PER_DAY = 96;
export const QUARTER_MS = 900_000;
export const HOURS_PER_DAY = 24;
export const HOUR_MS = 3_600_000;

/** The binary fields and the day's count. */
export const QUARTERS_FIELD = 'quarters';
/**
 * The same day's hours, each its four quarters added up, in the same layout (bits 0–23 of the
 * bitmap): where every boundary of an answer falls on a whole UTC hour (the local days and hours of
 * every zone whose offsets are whole hours, Europe/Berlin among them) the answer reads these, a
 * quarter of the bytes and of the additions of a dense day.
 */
export const HOURS_FIELD = 'hours';
export const DAY_COUNT_FIELD = 'count';

export type Stat = { count: number; sum: number; min: number; max: number };

const HEADER_BYTES = 16;
const BITMAP_BYTES = QUARTERS_PER_DAY / 8;
const WIDTH_BYTE = 12;
const DAY_BYTE = 13;
/** A signed 24-bit day number: ±22,900 years around 1970. */
const DAY_LIMIT = 2 ** 23;

/** Adds `b` into `a` (a fresh accumulator when `a` is null). */
export function addStat<T extends Stat>(a: T | null, b: Stat | null): T | null {
  if (!b) return a;
  if (!a) return { ...b } as T;
  a.count += b.count;
  a.sum += b.sum;
  if (b.min < a.min) a.min = b.min;
  if (b.max > a.max) a.max = b.max;
  return a;
}

/** The packed field of UTC day number `day`'s quarters (index q: quarter q; null or count 0: no samples). */
export function packQuarters(quarters: readonly (Stat | null)[], day: number): Buffer {
  if (quarters.length !== QUARTERS_PER_DAY) throw new Error(`a day has ${QUARTERS_PER_DAY} quarters, not ${quarters.length}`);
  return pack(quarters, day);
}

/** The packed field of the same day's hours (hour h: quarters 4h to 4h + 3 added up in time order). */
export function packHours(quarters: readonly (Stat | null)[], day: number): Buffer {
  if (quarters.length !== QUARTERS_PER_DAY) throw new Error(`a day has ${QUARTERS_PER_DAY} quarters, not ${quarters.length}`);
  const per = QUARTERS_PER_DAY / HOURS_PER_DAY;
  const hours: (Stat | null)[] = [];
  for (let h = 0; h < HOURS_PER_DAY; h++) {
    let hour: Stat | null = null;
    for (let q = h * per; q < (h + 1) * per; q++) if (quarters[q]?.count) hour = addStat(hour, quarters[q]!);
    hours.push(hour);
  }
  return pack(hours, day);
}

/**
 * Loops, no callbacks: the projector packs a day's quarters and hours for every day a batch
 * re-evaluates, and a callback made per call was optimised by V8 again after each of the
 * projector's mark-compacts (BENCHMARKS.md, issue 38, h17/compile).
 */
function pack(slots: readonly (Stat | null)[], day: number): Buffer {
  if (!Number.isInteger(day) || day < -DAY_LIMIT || day >= DAY_LIMIT) throw new Error(`day number ${day} does not fit a packed field`);
  const values: number[] = [];
  const bitmap = new Uint8Array(BITMAP_BYTES);
  for (let q = 0; q < slots.length; q++) {
    const s = slots[q];
    if (!s || s.count === 0) continue;
    bitmap[q >> 3]! |= 1 << (q & 7);
    values.push(s.count, s.sum, s.min, s.max);
  }
  let width = 4;
  for (const v of values) {
    if (Math.fround(v) !== v) {
      width = 8;
      break;
    }
  }
  const out = Buffer.alloc(HEADER_BYTES + values.length * width);
  out.set(bitmap, 0);
  out[WIDTH_BYTE] = width;
  out.writeIntLE(day, DAY_BYTE, 3);
  if (width === 4) for (let i = 0; i < values.length; i++) out.writeFloatLE(values[i]!, HEADER_BYTES + i * 4);
  else for (let i = 0; i < values.length; i++) out.writeDoubleLE(values[i]!, HEADER_BYTES + i * 8);
  return out;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Packed fields joined end to end (one field is a run of one): where each begins, the day it names,
 * and its quarters added into accumulators. The values are read through two views of the whole run
 * (every field's length is a multiple of 16 bytes, so each field's values are aligned where the run
 * is), not through a view or an object per field: a year of a series is one run of 365 fields.
 */
export class PackedRun {
  private readonly bytes: Uint8Array;
  private readonly f32: Float32Array | null;
  private readonly f64: Float64Array | null;

  /** `slots`: how many a day of these fields has (QUARTERS_PER_DAY, or HOURS_PER_DAY for the hours field). Throws on what is not bytes. */
  constructor(
    bytes: unknown,
    private readonly slots: number = QUARTERS_PER_DAY,
  ) {
    if (!(bytes instanceof Uint8Array)) throw new Error('not a packed quarters field');
    // Views need the run on an 8-byte boundary: a store may hand back a slice of a larger buffer.
    this.bytes = bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes);
    const whole = this.bytes.byteLength % 8 === 0;
    this.f32 = LITTLE_ENDIAN ? new Float32Array(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength >> 2) : null;
    this.f64 = LITTLE_ENDIAN && whole ? new Float64Array(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength >> 3) : null;
  }

  get byteLength(): number {
    return this.bytes.byteLength;
  }

  /** Where the field beginning at `at` ends (the next one's start). Throws on what is not a packed field. */
  endOf(at: number): number {
    const { width, present } = this.header(at);
    return at + HEADER_BYTES + present * 4 * width;
  }

  /** The value width and the count of present quarters of the field at `at`, checked against the run's length. */
  private header(at: number): { width: 4 | 8; present: number } {
    const b = this.bytes;
    const width = at + HEADER_BYTES <= b.byteLength ? b[at + WIDTH_BYTE]! : 0;
    if (width !== 4 && width !== 8) throw new Error('not a packed quarters field');
    const present = presentQuarters(b, at);
    if (at + HEADER_BYTES + present * 4 * width > b.byteLength) throw new Error('packed quarters field: bitmap and values disagree');
    return { width, present };
  }

  /** The UTC day number the field beginning at `at` names. */
  dayAt(at: number): number {
    const b = this.bytes;
    const v = b[at + DAY_BYTE]! | (b[at + DAY_BYTE + 1]! << 8) | (b[at + DAY_BYTE + 2]! << 16);
    return v >= DAY_LIMIT ? v - 2 * DAY_LIMIT : v;
  }

  /**
   * Adds the quarters (or hours) of the field beginning at `at` into accumulators: `pieces` are
   * triples (from, to, slot), ascending and disjoint ranges [from, to) of the day's quarters (hours);
   * the present ones inside one are added up, in time order, and their total added into
   * `stats[4·slot..4·slot+3]` (count, sum, min, max; a count of 0 there means empty, whatever the
   * other three hold). Those outside every piece are skipped.
   */
  addQuarters(at: number, pieces: readonly number[], stats: Float64Array): void {
    const field = this.bytes;
    const { width, present: n } = this.header(at);
    const { values, base } = this.values(at, width, n);
    if (n === this.slots) {
      // A dense day (every quarter, or hour, holds samples): quarter q's values are the q-th.
      for (let p = 0; p < pieces.length; p += 3) addRun(values, base + 4 * pieces[p]!, base + 4 * pieces[p + 1]!, stats, 4 * pieces[p + 2]!);
      return;
    }
    let k = base;
    let p = 0;
    let run = -1;
    for (let byte = 0; byte < BITMAP_BYTES; byte++) {
      let bits = field[at + byte]!;
      while (bits !== 0) {
        const q = byte * 8 + 31 - Math.clz32(bits & -bits);
        bits &= bits - 1;
        while (p < pieces.length && q >= pieces[p + 1]!) {
          if (run >= 0) addRun(values, run, k, stats, 4 * pieces[p + 2]!);
          run = -1;
          p += 3;
        }
        if (p < pieces.length && q >= pieces[p]! && run < 0) run = k;
        k += 4;
      }
    }
    if (run >= 0) addRun(values, run, k, stats, 4 * pieces[p + 2]!);
  }

  /** The values of the field at `at` (`n` present quarters): a view of the run and the index of its first value, or a copy where native order is not little-endian. */
  private values(at: number, width: 4 | 8, n: number): { values: Float32Array | Float64Array; base: number } {
    const start = at + HEADER_BYTES;
    const view = width === 4 ? this.f32 : this.f64;
    if (view) return { values: view, base: start / width };
    const data = new DataView(this.bytes.buffer, this.bytes.byteOffset + start, n * 4 * width);
    const out = width === 4 ? new Float32Array(n * 4) : new Float64Array(n * 4);
    for (let i = 0; i < n * 4; i++) out[i] = width === 4 ? data.getFloat32(i * 4, true) : data.getFloat64(i * 8, true);
    return { values: out, base: 0 };
  }
}

/** Adds the quarters whose values begin at indexes from, from + 4, … before end of `values`, in order, into the accumulator at `at`. */
function addRun(values: Float32Array | Float64Array, from: number, end: number, stats: Float64Array, at: number): void {
  if (from >= end) return;
  let count = 0;
  let sum = 0;
  let min = values[from + 2]!;
  let max = values[from + 3]!;
  for (let v = from; v < end; v += 4) {
    count += values[v]!;
    sum += values[v + 1]!;
    if (values[v + 2]! < min) min = values[v + 2]!;
    if (values[v + 3]! > max) max = values[v + 3]!;
  }
  if (stats[at] === 0) {
    stats[at + 1] = sum;
    stats[at + 2] = min;
    stats[at + 3] = max;
  } else {
    stats[at + 1] = stats[at + 1]! + sum;
    if (min < stats[at + 2]!) stats[at + 2] = min;
    if (max > stats[at + 3]!) stats[at + 3] = max;
  }
  stats[at] = stats[at]! + count;
}

/** How many quarters the bitmap of the field at `at` marks present. */
function presentQuarters(field: Uint8Array, at: number): number {
  let n = 0;
  for (let byte = at; byte < at + BITMAP_BYTES; byte++) for (let bits = field[byte]!; bits !== 0; bits &= bits - 1) n++;
  return n;
}
