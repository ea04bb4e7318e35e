import type Database from 'better-sqlite3';
import { dayNumber, mergeDayRunsRows } from './dayRuns.js';
import type { DayRun, DayRunsQuery, DayRunsRow, Scalar, StatColumns } from './readStore.js';
import { filterSql } from './sqliteQuery.js';
import type { SqliteTable } from './sqliteTable.js';

/** Runs per statement: each is one term of a compound SELECT (SQLite allows 500). */
export const RUNS_PER_STATEMENT = 100;

/**
 * ReadStore.aggregateDayRuns as SQL statements (several only past RUNS_PER_STATEMENT runs; their
 * rows are merged by mergeDayRunsRows). Each run is one index range scan of its days, its rows'
 * pieces' values crossed with a small table of the pieces; a CASE on the piece picks its values,
 * and one GROUP BY adds the pieces into buckets per series. No row reaches JavaScript, only
 * the buckets: `[bucket, ...series, count, sum, min, max]`, count > 0. The SQL text depends only
 * on the runs' shapes (their pieces' columns), so a query asked again reuses its statement.
 */
export function dayRunsSql(t: SqliteTable, q: DayRunsQuery): { sql: string; params: unknown[] }[] {
  const out: { sql: string; params: unknown[] }[] = [];
  // A piece without groups adds nothing, a run without pieces reads nothing (and neither has SQL).
  const runs = q.runs.map((r) => ({ ...r, pieces: r.pieces.filter((p) => p.groups.length) })).filter((r) => r.pieces.length);
  for (let i = 0; i < runs.length; i += RUNS_PER_STATEMENT) out.push(statement(t, q, runs.slice(i, i + RUNS_PER_STATEMENT)));
  return out;
}

/** Runs the statements of a query (prepared in raw mode by `prepare`) and reads their buckets. */
export function runDayRuns(t: SqliteTable, q: DayRunsQuery, prepare: (sql: string) => Database.Statement): DayRunsRow[] {
  const n = q.series.length;
  return mergeDayRunsRows(
    dayRunsSql(t, q).map(({ sql, params }) =>
      (prepare(sql).all(...params) as unknown[][]).map((r) => ({ bucket: r[0] as number, series: r.slice(1, n + 1) as Scalar[], count: r[n + 1] as number, sum: r[n + 2] as number, min: r[n + 3] as number, max: r[n + 4] as number })),
    ),
  );
}

function statement(t: SqliteTable, q: DayRunsQuery, runs: readonly DayRun[]): { sql: string; params: unknown[] } {
  const ctes: string[] = [];
  const params: unknown[] = [];
  const branches: string[] = [];
  const series = q.series.map((f, i) => `${t.expr(f)} AS g${i}`).join(', ');
  const day = t.expr(q.dayField);
  runs.forEach((run, r) => {
    const p = `p${r}`;
    const rows = `r${r}`;
    // Each piece's bucket on the run's first day, with the run's first day and stride beside it.
    ctes.push(`${p}(k, b, d0, st) AS (VALUES ${run.pieces.map((_, k) => `(${k}, ?, ?, ?)`).join(', ')})`);
    for (const piece of run.pieces) params.push(piece.bucket, dayNumber(run.from), run.stride);
    // Every piece's values of a row, as one row per day for the cross join. (Materialising it, so
    // that each wide row is read once rather than once per piece, measured slower.)
    const values = run.pieces.flatMap((piece, k) => [`${countSql(t, piece.groups)} AS c${k}`, `${sumSql(t, piece.groups)} AS s${k}`, `${minSql(t, piece.groups)} AS n${k}`, `${maxSql(t, piece.groups)} AS x${k}`]);
    const where = filterSql(t, { ...q.filter, [q.dayField]: { $gte: run.from, $lte: run.to } }, params);
    ctes.push(`${rows} AS (SELECT unixepoch(${day}) / 86400 AS dn, ${series}, ${values.join(', ')} FROM ${t.table} WHERE ${where})`);
    const pick = (v: string) => pickSql(`${p}.k`, run.pieces.map((_, k) => `${rows}.${v}${k}`));
    branches.push(
      `SELECT ${p}.b + (${rows}.dn - ${p}.d0) * ${p}.st AS b, ${q.series.map((_, i) => `${rows}.g${i} AS g${i}`).join(', ')}, ` +
        `${pick('c')} AS c, ${pick('s')} AS s, ${pick('n')} AS n, ${pick('x')} AS x FROM ${rows} CROSS JOIN ${p}`,
    );
  });
  const groups = ['b', ...q.series.map((_, i) => `g${i}`)].join(', ');
  const sql =
    `WITH ${ctes.join(', ')} SELECT ${groups}, TOTAL(c), TOTAL(s), MIN(n), MAX(x) ` +
    `FROM (${branches.join(' UNION ALL ')}) GROUP BY ${groups} HAVING TOTAL(c) > 0`;
  return { sql, params };
}

/**
 * The expression of piece `k`: a CASE over at most four pieces, split in halves above that, so a
 * run of 25 pieces (the hours of a UTC day in a zone 45 minutes off the hour) is a few
 * comparisons per piece rather than 12 on average.
 */
function pickSql(k: string, exprs: readonly string[], lo = 0, hi = exprs.length): string {
  if (hi - lo === 1) return exprs[lo]!;
  if (hi - lo <= 4) return `CASE ${k} ${exprs.slice(lo, hi).map((e, i) => `WHEN ${lo + i} THEN ${e}`).join(' ')} END`;
  const mid = (lo + hi) >> 1;
  return `CASE WHEN ${k} < ${mid} THEN ${pickSql(k, exprs, lo, mid)} ELSE ${pickSql(k, exprs, mid, hi)} END`;
}

// A piece of one group is its columns (NULL when the group holds nothing, which every aggregate
// skips). A piece of several adds the groups that hold values: absent counts and sums add 0, an
// absent minimum is +Inf and an absent maximum -Inf (9e999 overflows to Inf), so a piece of only
// absent groups has count 0 and leaves the bucket's min and max alone; a bucket of only such
// pieces is dropped (HAVING).
const NO_MIN = '9e999';
const NO_MAX = '-9e999';

const several = (t: SqliteTable, g: readonly StatColumns[], f: keyof StatColumns, join: (terms: string[]) => string, absent: string): string =>
  g.length === 1 ? t.expr(g[0]![f]) : join(g.map((x) => `coalesce(${t.expr(x[f])}, ${absent})`));

const countSql = (t: SqliteTable, g: readonly StatColumns[]) => several(t, g, 'count', (xs) => `(${xs.join(' + ')})`, '0');
const sumSql = (t: SqliteTable, g: readonly StatColumns[]) => several(t, g, 'sum', (xs) => `(${xs.join(' + ')})`, '0');
const minSql = (t: SqliteTable, g: readonly StatColumns[]) => several(t, g, 'min', (xs) => `min(${xs.join(', ')})`, NO_MIN);
const maxSql = (t: SqliteTable, g: readonly StatColumns[]) => several(t, g, 'max', (xs) => `max(${xs.join(', ')})`, NO_MAX);
