import type { CollectionSpec, Doc } from './readStore.js';
import { twinIndexName } from '../shared/sqliteScrubPass.js';

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * The physical shape of one collection in the embedded read store: `_id`, one real column per
 * declared field (every index field and every `columns` entry), and one JSON column `doc` with
 * the rest. Indexes and hot queries then work on plain columns that SQLite compares directly,
 * instead of `json_extract` expressions recomputed on every write and every row compared.
 *
 * A column holds the field's value when it is a string, a number or bytes (a Buffer, as a BLOB: bytes
 * only in a declared column, which `encode` enforces). Booleans are held as 0/1
 * (so filters and sorts work as before) and, like nulls, objects and arrays, are also kept in
 * `doc` unless the collection declares the field boolean; this makes decoding exact: a field is in the column alone only when the column can
 * say everything about it. `null` and "missing" stay distinct, as the port's `$exists` needs.
 */
export class SqliteTable {
  readonly table: string;
  readonly columns: readonly string[];
  private readonly columnSet: ReadonlySet<string>;
  /** Each column's place among `columns`. */
  private readonly columnIndex: ReadonlyMap<string, number>;
  private readonly booleanSet: ReadonlySet<string>;
  /** Stored with the table; a different shape means the table must be rebuilt. */
  readonly signature: string;
  readonly selectList: string;

  constructor(readonly spec: CollectionSpec) {
    this.table = tableName(spec.name);
    const cols = new Set<string>();
    for (const index of spec.indexes ?? []) {
      for (const [f] of index.fields) {
        if (f === '_id') continue;
        if (!FIELD.test(f)) throw new Error(`collection ${spec.name}: index field ${f} must be a top-level field`);
        cols.add(f);
      }
    }
    for (const f of spec.columns ?? []) {
      if (!FIELD.test(f) || f === '_id') throw new Error(`collection ${spec.name}: column ${f} must be a top-level field other than _id`);
      cols.add(f);
    }
    for (const f of spec.booleans ?? []) {
      if (!cols.has(f)) throw new Error(`collection ${spec.name}: boolean ${f} must be a declared column`);
    }
    this.columns = [...cols];
    this.columnSet = cols;
    this.columnIndex = new Map(this.columns.map((c, i) => [c, i]));
    this.booleanSet = new Set(spec.booleans ?? []);
    this.signature = JSON.stringify({ v: 2, columns: this.columns, booleans: spec.booleans ?? [], indexes: spec.indexes ?? [], ...(spec.version !== undefined ? { version: spec.version } : {}) });
    this.selectList = ['_id', ...this.columns.map(col), 'doc'].join(', ');
  }

  isColumn(field: string): boolean {
    return this.columnSet.has(field);
  }

  /** The SQL expression of a field: its column, `_id`, or a JSON path into `doc`. */
  expr(field: string): string {
    if (field === '_id') return '_id';
    if (this.columnSet.has(field)) return col(field);
    if (!PATH.test(field)) throw new Error(`invalid field path ${field}`);
    return `json_extract(doc, '$.${field}')`;
  }

  /** `$exists` of a field: for a column, a non-null value or a key kept in `doc` (null, boolean, object). */
  existsExpr(field: string): string {
    if (field === '_id') return '1';
    if (!PATH.test(field)) throw new Error(`invalid field path ${field}`);
    const inDoc = `json_type(doc, '$.${field}') IS NOT NULL`;
    return this.columnSet.has(field) ? `(${col(field)} IS NOT NULL OR ${inDoc})` : inDoc;
  }

  tableSql(): string {
    return `CREATE TABLE ${this.table} (_id TEXT PRIMARY KEY, ${this.columns.map((c) => `${col(c)},`).join(' ')} doc TEXT NOT NULL)`;
  }

  indexSql(): string[] {
    return (this.spec.indexes ?? []).map((index, i) => {
      const cols = index.fields.map(([f, d]) => `${f === '_id' ? '_id' : col(f)} ${d === -1 ? 'DESC' : 'ASC'}`).join(', ');
      return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${this.table}_ix${i} ON ${this.table} (${cols})`;
    });
  }

  createSql(): string[] {
    return [this.tableSql(), ...this.indexSql()];
  }

  private upsert: string | null = null;
  /**
   * The upsert of a whole row (`encode`'s values), written once per table: a rollup row has some
   * 670 columns, and writing this text (and hashing a new ~20 KB string to find its prepared
   * statement) for every row put was a fifth of the projector thread's time (issue 37). The same
   * string each time, so the statement cache finds it without comparing its text.
   */
  get upsertSql(): string {
    if (this.upsert === null) {
      const assignments = [...this.columns.map((f) => `${col(f)} = excluded.${col(f)}`), 'doc = excluded.doc'].join(', ');
      const params = ['_id', ...this.columns, 'doc'].map(() => '?').join(', ');
      this.upsert = `INSERT INTO ${this.table} (${this.selectList}) VALUES (${params}) ON CONFLICT(_id) DO UPDATE SET ${assignments}`;
    }
    return this.upsert;
  }

  /** `_id`, the column values and the `doc` JSON of a document, in `selectList` order. */
  encode(doc: Doc): unknown[] {
    // Walks the document's keys only, never every column: a collection may declare hundreds of columns, most
    // of them absent (NULL) in a given row (the rollups had some 670 before issue 38; issue 37).
    const values: unknown[] = new Array(this.columns.length + 2).fill(null);
    values[0] = doc._id;
    const rest: Record<string, unknown> = {};
    const keys = Object.keys(doc);
    for (let k = 0; k < keys.length; k++) {
      const f = keys[k]!;
      if (f !== '_id') this.encodeField(values, rest, f, doc[f]);
    }
    values[values.length - 1] = JSON.stringify(rest);
    return values;
  }

  /**
   * `encode({ _id: id, ...layers[0], ...layers[1], … })` without building that document: each
   * field in the place the spread would give it, with the value of the last layer that has it.
   * An upsert's row is its `setOnInsert` and `set` merged so; spreading a record's ~27 fields into
   * a new object cost 6 µs a row, a tenth of a rebuild's CPU (docs/rebuild.md).
   */
  encodeMerged(id: unknown, layers: readonly (Readonly<Record<string, unknown>> | undefined)[]): unknown[] {
    const values: unknown[] = new Array(this.columns.length + 2).fill(null);
    values[0] = id;
    const rest: Record<string, unknown> = {};
    for (let l = 0; l < layers.length; l++) {
      const layer = layers[l];
      if (!layer) continue;
      const keys = Object.keys(layer);
      for (let k = 0; k < keys.length; k++) {
        const f = keys[k]!;
        // Placed already by an earlier layer that has it.
        if (l > 0 && lastLayerWith(layers, f, 0, l) !== -1) continue;
        const last = lastLayerWith(layers, f, l + 1, layers.length);
        const v = last === -1 ? layer[f] : layers[last]![f];
        if (f === '_id') values[0] = v;
        else this.encodeField(values, rest, f, v);
      }
    }
    values[values.length - 1] = JSON.stringify(rest);
    return values;
  }

  /** One field into its column, and into the rest of the document unless the column alone holds it. */
  private encodeField(values: unknown[], rest: Record<string, unknown>, f: string, v: unknown): void {
    const i = this.columnIndex.get(f);
    if (i !== undefined) values[i + 1] = columnValue(v);
    else if (v instanceof Uint8Array) throw new Error(`collection ${this.spec.name}: bytes in ${f}, which is not a declared column (the JSON column cannot hold them)`);
    if (v !== undefined && (i === undefined || !this.holdsAll(f, v))) rest[f] = v;
  }

  /** The document of a row read with `selectList` (raw mode: values in column order). */
  decode(row: unknown[]): Doc {
    const doc = JSON.parse(row[row.length - 1] as string) as Doc;
    doc._id = row[0] as string;
    for (let i = 0; i < this.columns.length; i++) {
      const v = row[i + 1];
      const f = this.columns[i]!;
      if (v !== null && !(f in doc)) doc[f] = typeof v === 'number' && this.booleanSet.has(f) ? v === 1 : v;
    }
    return doc;
  }

  /**
   * Reading only some fields: the select list and a decoder. Column values are taken as they
   * are; `doc` is parsed only for a row where a wanted column is NULL (the value may be a null,
   * an object or a boolean kept there, or missing) or a wanted field is not a column, so a scan
   * over columns alone never parses JSON. (A declared boolean field reads back as a boolean.)
   */
  projection(fields: readonly string[]): { selectList: string; decode: (row: unknown[]) => Doc } {
    const wanted = [...new Set(fields)].filter((f) => f !== '_id');
    const cols = wanted.filter((f) => this.columnSet.has(f));
    const others = wanted.filter((f) => !this.columnSet.has(f));
    const selectList = ['_id', ...cols.map(col), 'doc'].join(', ');
    const booleans = cols.map((f) => this.booleanSet.has(f));
    return {
      selectList,
      // A plain loop without a closure per row: statistics decode hundreds of rows a request, and
      // the closures (with a Buffer field in each row) measured twice the time and a major GC every
      // 30 requests (issue 38).
      decode: (row) => {
        const out: Doc = { _id: row[0] as string };
        let rest: Record<string, unknown> | null = null;
        for (let i = 0; i < cols.length; i++) {
          const f = cols[i]!;
          const v = row[i + 1];
          if (v === null) {
            rest ??= JSON.parse(row[row.length - 1] as string) as Record<string, unknown>;
            if (f in rest) out[f] = rest[f];
          } else out[f] = typeof v === 'number' && booleans[i] ? v === 1 : v;
        }
        if (others.length) {
          rest ??= JSON.parse(row[row.length - 1] as string) as Record<string, unknown>;
          for (const f of others) if (f in rest) out[f] = rest[f];
        }
        return out;
      },
    };
  }

  /** True when the column alone restores the field's value: strings and numbers, and booleans of a boolean column. */
  holdsAll(field: string, v: unknown): boolean {
    // In a boolean column a number would read back as a boolean: numbers keep their copy in `doc`.
    if (this.booleanSet.has(field)) return typeof v === 'boolean' || typeof v === 'string';
    return columnHoldsAll(v);
  }
}

/** The last of `layers[from..to)` that has `f` as its own field, or -1. */
function lastLayerWith(layers: readonly (Readonly<Record<string, unknown>> | undefined)[], f: string, from: number, to: number): number {
  for (let l = to - 1; l >= from; l--) {
    const layer = layers[l];
    if (layer !== undefined && Object.hasOwn(layer, f)) return l;
  }
  return -1;
}

export function tableName(collection: string): string {
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(collection)) throw new Error(`invalid collection name ${collection}`);
  return `rm_${collection}`;
}

/** Column names carry a prefix, so no field can collide with `_id` or `doc`. */
export const col = (field: string): string => `"f_${field}"`;

/** What a column holds for a value: strings, numbers and bytes as they are, booleans as 0/1, everything else NULL. */
export function columnValue(v: unknown): unknown {
  if (typeof v === 'string' || typeof v === 'number') return v;
  if (v instanceof Uint8Array) return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
}

/** True when the column alone restores the value (strings, numbers, and bytes: a BLOB that reads back as a Buffer). */
export function columnHoldsAll(v: unknown): boolean {
  return typeof v === 'string' || typeof v === 'number' || v instanceof Uint8Array;
}

/**
 * Whether a collection declared `extendInPlace` can be taken from `before` to `after` in place:
 * every column kept and the same booleans. Its indexes may change: an index whose place in the
 * list (its name) now holds another definition, or none, is dropped and the new one built from the
 * rows (extensionSql). Such a table is extended in place instead of recreated (a delivery log
 * cannot be rebuilt from events).
 */
export function extendsShape(before: SqliteTable, after: SqliteTable): boolean {
  if (!after.spec.extendInPlace || before.spec.version !== after.spec.version) return false;
  if (!before.columns.every((c) => after.isColumn(c))) return false;
  return JSON.stringify([...(before.spec.booleans ?? [])].sort()) === JSON.stringify([...(after.spec.booleans ?? [])].sort());
}

/**
 * The statements that extend `before` to `after` (extendsShape): each new column added and filled
 * from the documents, the field leaving `doc` where the column alone holds it (a string or a
 * number, as `encode` would have put it); each index whose place changed its definition, or is
 * gone, dropped (with its twin, the name a scrub builds it under: sqliteScrubPass.ts). The new
 * indexes are then created like any.
 */
export function extensionSql(before: SqliteTable, after: SqliteTable): string[] {
  const old = before.spec.indexes ?? [];
  const now = after.spec.indexes ?? [];
  const dropped = old.flatMap((index, i) =>
    JSON.stringify(index) === JSON.stringify(now[i]) ? [] : [`${after.table}_ix${i}`, twinIndexName(`${after.table}_ix${i}`)].map((name) => `DROP INDEX IF EXISTS ${name}`),
  );
  return [
    ...after.columns
      .filter((c) => !before.isColumn(c))
      .flatMap((f) => [
        `ALTER TABLE ${after.table} ADD COLUMN ${col(f)}`,
        `UPDATE ${after.table} SET ${col(f)} = json_extract(doc, '$.${f}'), doc = json_remove(doc, '$.${f}') WHERE json_type(doc, '$.${f}') IN ('text', 'integer', 'real')`,
      ]),
    ...dropped,
  ];
}
