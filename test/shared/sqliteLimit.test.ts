import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { limitSql } from '../../src/shared/sqliteLimit.js';

const SRC = join(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('row limits of the embedded stores (src/shared/sqliteLimit.ts)', () => {
  it('writes an integer limit into the SQL and refuses anything else', () => {
    expect(limitSql(500)).toBe('LIMIT 500');
    expect(limitSql(Number.MAX_SAFE_INTEGER)).toBe(`LIMIT ${Number.MAX_SAFE_INTEGER}`);
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => limitSql(bad)).toThrow(RangeError);
  });

  it('no statement binds its LIMIT: SQLite would prepare it again at every run', () => {
    const bound = sourceFiles(SRC).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => ({ line: line.trim(), at: `${file.slice(SRC.length + 1)}:${i + 1}` }))
        .filter(({ line }) => !line.startsWith('*') && !line.startsWith('//') && /LIMIT \?/.test(line))
        .map(({ at }) => at),
    );
    expect(bound).toEqual([]);
  });
});
