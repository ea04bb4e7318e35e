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
 * of each value in bytes (4 or 8; byte 12), 3 bytes of padding, then for each such quarter in
 * ascending order its count, sum, min and max, little-endian. `count` beside it is the day's count
 * (coverage adds it up where the data is).
 */
export const QUARTERS_PER_DAY = 96;
export const QUARTER_MS = 900_000;

/** The binary field and the day's count. */
export const QUARTERS_FIELD = 'quarters';
export const DAY_COUNT_FIELD = 'count';

export type Stat = { count: number; sum: number; min: number; max: number };

const HEADER_BYTES = 16;
const BITMAP_BYTES = QUARTERS_PER_DAY / 8;
const WIDTH_BYTE = 12;

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

/** The packed field of a day's quarters (index q: quarter q; null or count 0: no samples). */
export function packQuarters(quarters: readonly (Stat | null)[]): Buffer {
  if (quarters.length !== QUARTERS_PER_DAY) throw new Error(`a day has ${QUARTERS_PER_DAY} quarters, not ${quarters.length}`);
  const present: Stat[] = [];
  const bitmap = new Uint8Array(BITMAP_BYTES);
  quarters.forEach((s, q) => {
    if (!s || s.count === 0) return;
    bitmap[q >> 3]! |= 1 << (q & 7);
    present.push(s);
  });
  const values = present.flatMap((s) => [s.count, s.sum, s.min, s.max]);
  const width = values.every((v) => Math.fround(v) === v) ? 4 : 8;
  const out = Buffer.alloc(HEADER_BYTES + values.length * width);
  out.set(bitmap, 0);
  out[WIDTH_BYTE] = width;
  values.forEach((v, i) => (width === 4 ? out.writeFloatLE(v, HEADER_BYTES + i * 4) : out.writeDoubleLE(v, HEADER_BYTES + i * 8)));
  return out;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Adds a packed field's quarters into accumulators: `pieces` are triples (from, to, slot), ascending
 * and disjoint quarter ranges [from, to); the present quarters inside one are added up, in time
 * order, and their total added into `stats[4·slot..4·slot+3]` (count, sum, min, max; a count of 0
 * there means empty, whatever the other three hold). Quarters outside every piece are skipped.
 * Throws on a value that is not a packed field.
 */
export function addQuarters(field: unknown, pieces: readonly number[], stats: Float64Array): void {
  const width = field instanceof Uint8Array && field.byteLength >= HEADER_BYTES ? field[WIDTH_BYTE]! : 0;
  if (!(field instanceof Uint8Array) || (width !== 4 && width !== 8) || (field.byteLength - HEADER_BYTES) % (4 * width) !== 0) throw new Error('not a packed quarters field');
  const n = (field.byteLength - HEADER_BYTES) / (4 * width);
  const values = floats(field, width, n * 4);
  if (n === QUARTERS_PER_DAY) {
    if (presentQuarters(field) !== n) throw new Error('packed quarters field: bitmap and values disagree');
    // A dense day (every quarter holds samples): quarter q's values are the q-th.
    for (let p = 0; p < pieces.length; p += 3) addRun(values, pieces[p]!, pieces[p + 1]!, stats, 4 * pieces[p + 2]!);
    return;
  }
  let k = 0;
  let p = 0;
  let run = -1;
  for (let byte = 0; byte < BITMAP_BYTES; byte++) {
    let bits = field[byte]!;
    while (bits !== 0) {
      const q = byte * 8 + 31 - Math.clz32(bits & -bits);
      bits &= bits - 1;
      if (k >= n) throw new Error('packed quarters field: bitmap and values disagree');
      while (p < pieces.length && q >= pieces[p + 1]!) {
        if (run >= 0) addRun(values, run, k, stats, 4 * pieces[p + 2]!);
        run = -1;
        p += 3;
      }
      if (p < pieces.length && q >= pieces[p]! && run < 0) run = k;
      k++;
    }
  }
  if (k !== n) throw new Error('packed quarters field: bitmap and values disagree');
  if (run >= 0) addRun(values, run, k, stats, 4 * pieces[p + 2]!);
}

/** Adds the values of the k-th to (end - 1)-th present quarters, in order, into the accumulator at `at`. */
function addRun(values: Float32Array | Float64Array, from: number, end: number, stats: Float64Array, at: number): void {
  if (from >= end) return;
  let count = 0;
  let sum = 0;
  let min = values[4 * from + 2]!;
  let max = values[4 * from + 3]!;
  for (let k = from; k < end; k++) {
    const v = 4 * k;
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

/** How many quarters the bitmap marks present. */
function presentQuarters(field: Uint8Array): number {
  let n = 0;
  for (let byte = 0; byte < BITMAP_BYTES; byte++) for (let bits = field[byte]!; bits !== 0; bits &= bits - 1) n++;
  return n;
}

/** The `count` values after the header: a view where the bytes are aligned and native order is theirs, a copy otherwise. */
function floats(bytes: Uint8Array, width: 4 | 8, count: number): Float32Array | Float64Array {
  const start = bytes.byteOffset + HEADER_BYTES;
  if (LITTLE_ENDIAN && start % width === 0) return width === 4 ? new Float32Array(bytes.buffer, start, count) : new Float64Array(bytes.buffer, start, count);
  const view = new DataView(bytes.buffer, start, count * width);
  const out = width === 4 ? new Float32Array(count) : new Float64Array(count);
  for (let i = 0; i < count; i++) out[i] = width === 4 ? view.getFloat32(i * 4, true) : view.getFloat64(i * 8, true);
  return out;
}
