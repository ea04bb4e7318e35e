import type Database from 'better-sqlite3';

/**
 * What a stranger's SQLite schema may declare before SQLite is asked to check or read the file
 * (issue 34 §1, contracts §18). `PRAGMA quick_check` evaluates the file's own CHECK constraints and
 * the NOT NULL of generated columns on every row, and `trusted_schema = OFF` does not stop the
 * built-in functions (`zeroblob`, `hex`, `printf`, …): 20 rows with
 * `CHECK(length(hex(zeroblob(20000000)))>0)` cost 989 ms, 10,000 rows about 500 s, in a file of
 * 100 KB. So everything in the schema that makes SQLite run the sender's expressions is refused
 * here, from the schema alone, before the integrity check:
 *
 * - CHECK constraints: neither app declares one (the Gadgetbridge files of ../shared/realdata,
 *   greenDAO's generated DDL, and Health Connect's CreateTableRequest have none).
 * - generated columns, except plain arithmetic over the table's stored columns: Health Connect's
 *   record tables (database version ≥ 10) each have `local_date_time… AS (start_time + 1000 *
 *   start_zone_offset)`, so refusing every generated column would refuse every real export. An
 *   expression of at most MAX_GENERATED_TOKENS tokens, each a column that is not itself generated,
 *   a number, `+ - * / %` or a parenthesis, costs a few conversions per row whatever the data: no
 *   function, no string built, no chain of generated columns multiplying the work.
 * - triggers, views: neither app creates one; read-only connections never fire a trigger, but a
 *   file that has them is not an export of either app.
 * - expression and partial indexes: neither app creates one (Gadgetbridge's and Health Connect's
 *   indexes are on plain columns); their expressions are the sender's code again.
 *
 * The CREATE text is tokenised the way SQLite reads it (string literals, quoted identifiers and
 * comments skipped), so a column named "check_x" or a default 'CHECK' is no constraint, and a
 * keyword hidden in a comment neither.
 */

/** Longest generated-column expression accepted, in tokens (Health Connect's has 5). */
const MAX_GENERATED_TOKENS = 15;
/** Objects named in a refusal. */
const MAX_NAMED = 5;

export type SchemaRefusal = { kind: 'schema'; reasons: string[] };

type Token = { kind: 'word' | 'quoted' | 'string' | 'number' | 'punct'; text: string };

/** Why the schema of a freshly opened database is refused, or null. Reads only the schema. */
export function untrustedSchemaRefusal(db: Database.Database): SchemaRefusal | null {
  const objects = db.prepare(`SELECT type, name, sql FROM sqlite_master`).all() as { type: string; name: string; sql: string | null }[];
  const reasons: string[] = [];
  const named = (what: string, names: string[]) => {
    if (names.length) reasons.push(`${what} (${names.slice(0, MAX_NAMED).join(', ')}${names.length > MAX_NAMED ? ', …' : ''})`);
  };
  named('triggers', objects.filter((o) => o.type === 'trigger').map((o) => o.name));
  named('views', objects.filter((o) => o.type === 'view').map((o) => o.name));

  const tables = objects.filter((o) => o.type === 'table');
  const checks: string[] = [];
  const generated: string[] = [];
  const indexes: string[] = [];
  for (const table of tables) {
    const tokens = tokenize(table.sql ?? '');
    if (tokens.some((t) => t.kind === 'word' && t.text.toUpperCase() === 'CHECK')) checks.push(table.name);
    const columns = db.prepare(`PRAGMA table_xinfo(${quote(table.name)})`).all() as { name: string; hidden: number }[];
    const computed = new Set(columns.filter((c) => c.hidden === 2 || c.hidden === 3).map((c) => c.name.toLowerCase()));
    const definitions = computed.size ? columnDefinitions(tokens) : new Map<string, Token[]>();
    for (const name of computed) {
      const definition = definitions.get(name);
      const expression = definition ? asExpression(definition) : null;
      if (!expression || !harmless(expression, computed)) generated.push(`${table.name}.${name}`);
    }
    const list = db.prepare(`PRAGMA index_list(${quote(table.name)})`).all() as { name: string; partial: number }[];
    for (const index of list) {
      if (index.partial === 1) indexes.push(index.name);
      else if ((db.prepare(`PRAGMA index_xinfo(${quote(index.name)})`).all() as { cid: number }[]).some((c) => c.cid === -2)) indexes.push(index.name);
    }
  }
  named('CHECK constraints in tables', checks);
  named('generated columns computed by more than arithmetic over stored columns', generated);
  named('expression or partial indexes', indexes);
  return reasons.length ? { kind: 'schema', reasons } : null;
}

/** Arithmetic over stored columns only: see the module's comment. */
function harmless(expression: Token[], generatedColumns: Set<string>): boolean {
  if (expression.length === 0 || expression.length > MAX_GENERATED_TOKENS) return false;
  return expression.every((t, i) => {
    if (t.kind === 'number') return true;
    if (t.kind === 'punct') return '+-*/%()'.includes(t.text);
    if (t.kind === 'word' || t.kind === 'quoted') return expression[i + 1]?.text !== '(' && !generatedColumns.has(unquote(t).toLowerCase());
    return false;
  });
}

/**
 * The definitions between the CREATE TABLE's outer parentheses, by column name (lower case), in
 * one pass: a table may have up to 2,000 columns, and scanning its text once per generated column
 * would cost columns × text.
 */
function columnDefinitions(tokens: Token[]): Map<string, Token[]> {
  const definitions = new Map<string, Token[]>();
  const open = tokens.findIndex((t) => t.text === '(');
  if (open < 0) return definitions;
  let depth = 0;
  let start = open + 1;
  for (let i = open + 1; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.text === '(') depth++;
    else if (t.text === ')' && depth > 0) depth--;
    else if ((t.text === ',' || t.text === ')') && depth === 0) {
      const definition = tokens.slice(start, i);
      const first = definition[0];
      if (first && (first.kind === 'word' || first.kind === 'quoted') && !definitions.has(unquote(first).toLowerCase())) definitions.set(unquote(first).toLowerCase(), definition);
      if (t.text === ')') break;
      start = i + 1;
    }
  }
  return definitions;
}

/** The tokens between the parentheses of `AS (…)` in a column's definition, or null when it shows none. */
function asExpression(definition: Token[]): Token[] | null {
  let depth = 0;
  for (let i = 1; i < definition.length; i++) {
    const t = definition[i]!;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (depth === 0 && t.kind === 'word' && t.text.toUpperCase() === 'AS' && definition[i + 1]?.text === '(') {
      let inner = 0;
      for (let j = i + 2; j < definition.length; j++) {
        const u = definition[j]!;
        if (u.text === '(') inner++;
        else if (u.text === ')' && inner-- === 0) return definition.slice(i + 2, j);
      }
      return null;
    }
  }
  return null;
}

const isWordStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c >= 0x80;
const isWordPart = (c: number) => isWordStart(c) || (c >= 48 && c <= 57) || c === 36;
const isDigit = (c: number) => c >= 48 && c <= 57;

/** SQLite's tokens of `sql`, without whitespace and comments (an unterminated one ends the text). */
function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const until = (close: string, from: number, doubled: boolean): number => {
    let j = from;
    for (;;) {
      const k = sql.indexOf(close, j);
      if (k < 0) return sql.length;
      if (doubled && sql[k + 1] === close) j = k + 2;
      else return k + 1;
    }
  };
  while (i < sql.length) {
    const c = sql.charCodeAt(i);
    const ch = sql[i]!;
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\f') i++;
    else if (ch === '-' && sql[i + 1] === '-') i = sql.indexOf('\n', i) < 0 ? sql.length : sql.indexOf('\n', i) + 1;
    else if (ch === '/' && sql[i + 1] === '*') i = sql.indexOf('*/', i + 2) < 0 ? sql.length : sql.indexOf('*/', i + 2) + 2;
    else if (ch === "'") {
      const end = until("'", i + 1, true);
      tokens.push({ kind: 'string', text: sql.slice(i, end) });
      i = end;
    } else if (ch === '"' || ch === '`' || ch === '[') {
      const close = ch === '[' ? ']' : ch;
      const end = until(close, i + 1, ch !== '[');
      tokens.push({ kind: 'quoted', text: sql.slice(i, end) });
      i = end;
    } else if (isWordStart(c)) {
      let j = i + 1;
      while (j < sql.length && isWordPart(sql.charCodeAt(j))) j++;
      tokens.push({ kind: 'word', text: sql.slice(i, j) });
      i = j;
    } else if (isDigit(c) || (ch === '.' && isDigit(sql.charCodeAt(i + 1)))) {
      let j = i + 1;
      while (j < sql.length && (isWordPart(sql.charCodeAt(j)) || sql[j] === '.' || ((sql[j] === '+' || sql[j] === '-') && /[eE]/.test(sql[j - 1]!)))) j++;
      tokens.push({ kind: 'number', text: sql.slice(i, j) });
      i = j;
    } else {
      tokens.push({ kind: 'punct', text: ch });
      i++;
    }
  }
  return tokens;
}

/** An identifier token's name: the quotes removed and doubled quotes undone. */
function unquote(t: Token): string {
  if (t.kind !== 'quoted') return t.text;
  const open = t.text[0]!;
  const close = open === '[' ? ']' : open;
  const inner = t.text.slice(1, t.text.endsWith(close) && t.text.length > 1 ? -1 : undefined);
  return open === '[' ? inner : inner.split(close + close).join(close);
}

const quote = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;
