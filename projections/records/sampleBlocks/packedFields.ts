/**
 * How a block packs one field of its samples beyond plain columns (sampleBlock.ts, docs/sample-blocks.md
 * "Layout"): whether every sample holds one value of it (stored once, `c`), and a field of objects
 * with the same keys packed by key (`g`).
 */

/** The values of one field, objects of the same keys, packed by key (Packed `g`). */
export type PackedObjects = { o: string[]; c: Record<string, unknown>; f: Record<string, unknown[]> };

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** `values` packed by key when every one is a plain object with the same keys in the same order and none undefined, else null. */
export function packObjects(values: readonly unknown[]): PackedObjects | null {
  const first = values[0];
  if (!isPlainObject(first)) return null;
  const keys = Object.keys(first);
  // `__proto__` as a key (JSON.parse makes it an own property) would be set as the prototype by unpackObjects.
  if (keys.includes('__proto__')) return null;
  for (const v of values) {
    if (!isPlainObject(v)) return null;
    const ks = Object.keys(v);
    if (ks.length !== keys.length) return null;
    for (let i = 0; i < ks.length; i++) if (ks[i] !== keys[i] || v[ks[i]!] === undefined) return null;
  }
  const docs = values as readonly Record<string, unknown>[];
  const packed: PackedObjects = { o: keys, c: {}, f: {} };
  for (const k of keys) {
    if (constantField(docs, k)) packed.c[k] = first[k];
    else packed.f[k] = docs.map((d) => d[k]);
  }
  return packed;
}

/** The objects packObjects packed, one per sample, with their keys in their order. */
export function unpackObjects(g: PackedObjects, n: number): Record<string, unknown>[] {
  // Own keys only: a provider may name a metadata key `toString` or `constructor`.
  const proto: Record<string, unknown> = {};
  for (const k of g.o) proto[k] = Object.hasOwn(g.c, k) ? g.c[k] : null;
  const varying = g.o.filter((k) => !Object.hasOwn(g.c, k));
  const out = new Array<Record<string, unknown>>(n);
  for (let j = 0; j < n; j++) {
    const o: Record<string, unknown> = { ...proto };
    for (const k of varying) o[k] = g.f[k]![j];
    out[j] = o;
  }
  return out;
}

/** Whether every sample has the same value of `field` as JSON (arrays and objects by content; decoded ones are often one shared object). */
function constantField(docs: readonly Record<string, unknown>[], field: string): boolean {
  const first = docs[0]![field];
  let firstJson: string | null = null;
  for (let j = 1; j < docs.length; j++) {
    const v = docs[j]![field];
    if (v === first) continue;
    if (v === null || first === null || typeof v !== 'object' || typeof first !== 'object') return false;
    // Each sample's own copy of a small array or object (its quality flags, its metadata) is
    // compared entry by entry first: JSON text for every sample was most of the encoding's work.
    if (sameEntries(v, first)) continue;
    firstJson ??= JSON.stringify(first);
    if (JSON.stringify(v) !== firstJson) return false;
  }
  return true;
}

/**
 * True when `a` and `b` are both arrays, or both plain objects, with the same keys in the same
 * order and identical (===) values: their JSON is then the same. False says nothing (the caller
 * compares the JSON): NaN, nested copies, a key whose value is undefined in one only.
 */
export function sameEntries(a: object, b: object): boolean {
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  if (Array.isArray(b) || Object.getPrototypeOf(a) !== Object.prototype || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || (a as Record<string, unknown>)[k] !== (b as Record<string, unknown>)[k]) return false;
  }
  return true;
}
