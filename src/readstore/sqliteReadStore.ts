import Database from 'better-sqlite3';
import { applyUpdate } from './documentUpdate.js';
import {
  CheckpointMismatchError,
  withTieBreaker,
  type AggregateQuery,
  type AggregateRow,
  type ApplyBatch,
  type Change,
  type Checkpoint,
  type CollectionSpec,
  type Doc,
  type Filter,
  type FindQuery,
  type ReadStore,
  type Scalar,
} from './readStore.js';

type CheckpointRow = { projection: string; position: number; status: 'live' | 'rebuilding'; updated_at: string; last_event_at: string | null };

/**
 * Embedded read-model store: one table per collection (`_id`, JSON `doc`), with declared
 * indexes as expression indexes on json_extract. Queries use the very same expressions, so
 * SQLite's planner picks the indexes. A projection batch and its checkpoint commit in one
 * transaction.
 */
export class SqliteReadStore implements ReadStore {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly stmtCache = new Map<string, Database.Statement>();
  private readonly known = new Set<string>();

  constructor(options: { path: string }) {
    this.db = new Database(options.path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`CREATE TABLE IF NOT EXISTS _checkpoints (
      projection TEXT PRIMARY KEY, position INTEGER NOT NULL, status TEXT NOT NULL,
      updated_at TEXT NOT NULL, last_event_at TEXT)`);
  }

  async ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    this.db.transaction(() => {
      for (const spec of specs) {
        const table = tableName(spec.name);
        this.db.exec(`CREATE TABLE IF NOT EXISTS ${table} (_id TEXT PRIMARY KEY, doc TEXT NOT NULL)`);
        spec.indexes?.forEach((index, i) => {
          const cols = index.fields.map(([f, d]) => `${fieldExpr(f)} ${d === -1 ? 'DESC' : 'ASC'}`).join(', ');
          const name = `${table}_ix_${index.fields.map(([f]) => f.replace(/\W/g, '_')).join('_')}_${i}`;
          this.db.exec(`CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${name} ON ${table} (${cols})`);
        });
        this.known.add(spec.name);
      }
    })();
  }

  async dropCollections(names: readonly string[]): Promise<void> {
    this.db.transaction(() => {
      for (const n of names) {
        this.db.exec(`DROP TABLE IF EXISTS ${tableName(n)}`);
        this.known.delete(n);
      }
    })();
    this.stmtCache.clear();
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    if (!this.exists(collection)) return null;
    const row = this.stmt(`SELECT doc FROM ${tableName(collection)} WHERE _id = ?`).get(id) as { doc: string } | undefined;
    return row ? (JSON.parse(row.doc) as T) : null;
  }

  async find<T extends Doc = Doc>(collection: string, query: FindQuery = {}): Promise<T[]> {
    if (!this.exists(collection)) return [];
    const params: unknown[] = [];
    const where = [filterSql(query.filter ?? {}, params)];
    const sort = withTieBreaker(query.sort);
    if (query.after) where.push(keysetSql(sort, query.after, params));
    const order = sort.map(([f, d]) => `${fieldExpr(f)} ${d === -1 ? 'DESC' : 'ASC'}`).join(', ');
    let sql = `SELECT doc FROM ${tableName(collection)} WHERE ${where.join(' AND ')} ORDER BY ${order}`;
    if (query.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(query.limit);
    }
    const rows = this.stmt(sql).all(...params) as { doc: string }[];
    return rows.map((r) => JSON.parse(r.doc) as T);
  }

  async count(collection: string, filter: Filter = {}): Promise<number> {
    if (!this.exists(collection)) return 0;
    const params: unknown[] = [];
    const row = this.stmt(`SELECT COUNT(*) AS n FROM ${tableName(collection)} WHERE ${filterSql(filter, params)}`).get(...params) as { n: number };
    return row.n;
  }

  async aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]> {
    if (!this.exists(collection)) return [];
    const params: unknown[] = [];
    const cols: string[] = query.groupBy.map((f, i) => `${fieldExpr(f)} AS g${i}`);
    cols.push('COUNT(*) AS n');
    (query.sum ?? []).forEach((f, i) => cols.push(`TOTAL(${fieldExpr(f)}) AS s${i}`));
    (query.min ?? []).forEach((f, i) => cols.push(`MIN(${fieldExpr(f)}) AS lo${i}`));
    (query.max ?? []).forEach((f, i) => cols.push(`MAX(${fieldExpr(f)}) AS hi${i}`));
    const groups = query.groupBy.map((_, i) => `g${i}`).join(', ');
    let sql = `SELECT ${cols.join(', ')} FROM ${tableName(collection)} WHERE ${filterSql(query.filter ?? {}, params)}`;
    if (groups) sql += ` GROUP BY ${groups} ORDER BY ${groups}`;
    if (query.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(query.limit);
    }
    const rows = this.stmt(sql).all(...params) as Record<string, Scalar>[];
    return rows.map((r) => ({
      group: Object.fromEntries(query.groupBy.map((f, i) => [f, r[`g${i}`] ?? null])),
      count: Number(r.n),
      sum: Object.fromEntries((query.sum ?? []).map((f, i) => [f, Number(r[`s${i}`] ?? 0)])),
      min: Object.fromEntries((query.min ?? []).map((f, i) => [f, r[`lo${i}`] ?? null])),
      max: Object.fromEntries((query.max ?? []).map((f, i) => [f, r[`hi${i}`] ?? null])),
    }));
  }

  async applyChanges(changes: readonly Change[]): Promise<void> {
    this.db.transaction(() => {
      for (const c of changes) this.applyOne(c);
    })();
  }

  async applyBatch(batch: ApplyBatch): Promise<void> {
    this.db
      .transaction(() => {
        const cp = this.readCheckpoint(batch.projection);
        const position = cp?.position ?? 0;
        const status = cp?.status ?? 'live';
        if (position !== batch.expectedPosition || status !== batch.mode) {
          throw new CheckpointMismatchError(batch.projection, batch.expectedPosition, cp?.position ?? null, status);
        }
        for (const c of batch.changes) this.applyOne(c);
        this.writeCheckpoint(batch.projection, batch.position, batch.mode, batch.lastEventAt ?? cp?.last_event_at ?? null);
      })
      .immediate();
  }

  async getCheckpoint(projection: string): Promise<Checkpoint | null> {
    const row = this.readCheckpoint(projection);
    return row ? toCheckpoint(row) : null;
  }

  async listCheckpoints(): Promise<Checkpoint[]> {
    const rows = this.stmt('SELECT * FROM _checkpoints ORDER BY projection').all() as CheckpointRow[];
    return rows.map(toCheckpoint);
  }

  async setCheckpoint(projection: string, position: number, status: Checkpoint['status']): Promise<void> {
    this.writeCheckpoint(projection, position, status, position === 0 ? null : (this.readCheckpoint(projection)?.last_event_at ?? null));
  }

  async close(): Promise<void> {
    this.db.close();
  }

  private readCheckpoint(projection: string): CheckpointRow | undefined {
    return this.stmt('SELECT * FROM _checkpoints WHERE projection = ?').get(projection) as CheckpointRow | undefined;
  }

  private writeCheckpoint(projection: string, position: number, status: string, lastEventAt: string | null): void {
    this.stmt(
      `INSERT INTO _checkpoints (projection, position, status, updated_at, last_event_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(projection) DO UPDATE SET position = excluded.position, status = excluded.status,
         updated_at = excluded.updated_at, last_event_at = excluded.last_event_at`,
    ).run(projection, position, status, new Date().toISOString(), lastEventAt);
  }

  private applyOne(c: Change): void {
    const table = tableName(c.collection);
    switch (c.op) {
      case 'put':
        this.stmt(`INSERT INTO ${table} (_id, doc) VALUES (?, ?) ON CONFLICT(_id) DO UPDATE SET doc = excluded.doc`).run(
          c.doc._id,
          JSON.stringify(c.doc),
        );
        return;
      case 'update': {
        if (this.setOnlyUpdate(table, c)) return;
        const row = this.stmt(`SELECT doc FROM ${table} WHERE _id = ?`).get(c.id) as { doc: string } | undefined;
        const next = applyUpdate(row ? (JSON.parse(row.doc) as Doc) : null, c);
        if (!next) return;
        this.stmt(`INSERT INTO ${table} (_id, doc) VALUES (?, ?) ON CONFLICT(_id) DO UPDATE SET doc = excluded.doc`).run(
          c.id,
          JSON.stringify(next),
        );
        return;
      }
      case 'delete':
        this.stmt(`DELETE FROM ${table} WHERE _id = ?`).run(c.id);
        return;
      case 'deleteMany': {
        const params: unknown[] = [];
        this.stmt(`DELETE FROM ${table} WHERE ${filterSql(c.filter, params)}`).run(...params);
        return;
      }
    }
  }

  /**
   * `set` (and `setOnInsert`) alone is one statement: insert the whole document, or on conflict
   * json_set the `set` fields into the stored one (MongoDB $set semantics: other fields stay).
   * A record upsert thus costs one indexed write, not a read, a parse and a rewrite.
   */
  private setOnlyUpdate(table: string, c: Extract<Change, { op: 'update' }>): boolean {
    if (c.unset?.length || c.inc || c.min || c.max) return false;
    const fields = Object.keys(c.set ?? {});
    if (fields.length === 0) return false;
    // Top-level fields only: json_set does not create missing parents of a dotted path.
    const plain = /^[A-Za-z_][A-Za-z0-9_]*$/;
    if (!fields.every((f) => plain.test(f)) || !Object.keys(c.setOnInsert ?? {}).every((f) => plain.test(f))) return false;
    const paths = fields.map((f) => `'$.${f}', json(?)`).join(', ');
    const values = fields.map((f) => JSON.stringify(c.set![f] ?? null));
    if (c.upsert) {
      const doc: Doc = { _id: c.id };
      if (c.setOnInsert) for (const [k, v] of Object.entries(c.setOnInsert)) doc[k] = v;
      for (const f of fields) doc[f] = c.set![f];
      this.stmt(`INSERT INTO ${table} (_id, doc) VALUES (?, ?) ON CONFLICT(_id) DO UPDATE SET doc = json_set(doc, ${paths})`).run(
        c.id,
        JSON.stringify(doc),
        ...values,
      );
    } else {
      this.stmt(`UPDATE ${table} SET doc = json_set(doc, ${paths}) WHERE _id = ?`).run(...values, c.id);
    }
    return true;
  }

  private exists(collection: string): boolean {
    if (this.known.has(collection)) return true;
    const row = this.stmt("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?").get(tableName(collection));
    if (row) this.known.add(collection);
    return !!row;
  }

  private stmt(sql: string): Database.Statement {
    let s = this.stmtCache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      if (this.stmtCache.size > 2000) this.stmtCache.clear();
      this.stmtCache.set(sql, s);
    }
    return s;
  }
}

function toCheckpoint(row: CheckpointRow): Checkpoint {
  return { projection: row.projection, position: row.position, status: row.status, updatedAt: row.updated_at, lastEventAt: row.last_event_at };
}

function tableName(collection: string): string {
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(collection)) throw new Error(`invalid collection name ${collection}`);
  return `rm_${collection}`;
}

function fieldExpr(field: string): string {
  if (field === '_id') return '_id';
  if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(field)) throw new Error(`invalid field path ${field}`);
  return `json_extract(doc, '$.${field}')`;
}

/** SQLite keeps JSON booleans as 1/0; parameters must match. */
function sqlValue(v: Scalar): unknown {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

function filterSql(filter: Filter, params: unknown[]): string {
  const parts: string[] = [];
  for (const [field, cond] of Object.entries(filter)) {
    const expr = fieldExpr(field);
    if (cond === null || typeof cond !== 'object') {
      if (cond === null) parts.push(`${expr} IS NULL`);
      else {
        parts.push(`${expr} = ?`);
        params.push(sqlValue(cond));
      }
      continue;
    }
    const ops: [string, Scalar | undefined][] = [
      ['>', cond.$gt],
      ['>=', cond.$gte],
      ['<', cond.$lt],
      ['<=', cond.$lte],
    ];
    if (cond.$eq !== undefined) {
      if (cond.$eq === null) parts.push(`${expr} IS NULL`);
      else {
        parts.push(`${expr} = ?`);
        params.push(sqlValue(cond.$eq));
      }
    }
    if (cond.$ne !== undefined) {
      parts.push(`${expr} IS NOT ?`);
      params.push(sqlValue(cond.$ne));
    }
    for (const [op, v] of ops) {
      if (v === undefined) continue;
      parts.push(`${expr} ${op} ?`);
      params.push(sqlValue(v));
    }
    if (cond.$in !== undefined) {
      if (cond.$in.length === 0) parts.push('0');
      else {
        const nonNull = cond.$in.filter((v) => v !== null);
        const inSql = nonNull.length ? `${expr} IN (${nonNull.map(() => '?').join(',')})` : '0';
        params.push(...nonNull.map(sqlValue));
        parts.push(cond.$in.includes(null) ? `(${inSql} OR ${expr} IS NULL)` : inSql);
      }
    }
    if (cond.$exists !== undefined) {
      const path = field === '_id' ? null : `'$.${field}'`;
      parts.push(path ? `json_type(doc, ${path}) IS ${cond.$exists ? 'NOT ' : ''}NULL` : cond.$exists ? '1' : '0');
    }
  }
  return parts.length ? parts.join(' AND ') : '1';
}

/** Rows strictly after `after` in `sort` order. Uniform directions use a row-value comparison, which SQLite serves from an index. */
function keysetSql(sort: ReturnType<typeof withTieBreaker>, after: readonly Scalar[], params: unknown[]): string {
  if (after.length !== sort.length) throw new Error('cursor does not match the sort');
  const dirs = new Set(sort.map(([, d]) => d));
  if (dirs.size === 1) {
    const op = sort[0]![1] === 1 ? '>' : '<';
    params.push(...after.map(sqlValue));
    return `(${sort.map(([f]) => fieldExpr(f)).join(', ')}) ${op} (${after.map(() => '?').join(', ')})`;
  }
  const ors: string[] = [];
  for (let i = 0; i < sort.length; i++) {
    const ands: string[] = [];
    for (let j = 0; j < i; j++) {
      ands.push(`${fieldExpr(sort[j]![0])} = ?`);
      params.push(sqlValue(after[j]!));
    }
    ands.push(`${fieldExpr(sort[i]![0])} ${sort[i]![1] === 1 ? '>' : '<'} ?`);
    params.push(sqlValue(after[i]!));
    ors.push(`(${ands.join(' AND ')})`);
  }
  return `(${ors.join(' OR ')})`;
}
