/**
 * A row limit written into a statement's SQL, never bound as `LIMIT ?`.
 *
 * The SQLite better-sqlite3 12 builds (3.53, with STAT4) plans a query with the value bound to its
 * `LIMIT ?`, and so marks the statement to be prepared again each time that parameter is bound:
 * every run of such a statement parsed and planned its SQL again, however often it had run. Measured
 * on this machine, a one-row read by an index: 7.6 µs a run with `LIMIT ?`, 3.2 µs with the literal;
 * in an upload burst the repreparing was 5-6 % of the HTTP, projector and ETL threads' CPU
 * (BENCHMARKS.md, issue 37, H18-C). Callers keep their statements per limit: each uses a handful.
 */
export function limitSql(n: number): string {
  if (!Number.isSafeInteger(n)) throw new RangeError(`a row limit must be an integer, not ${n}`);
  return `LIMIT ${n}`;
}
