import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { csvTable } from '../../../../src/sources/files/exportShared/csvTable.js';
import { JsonArrayError, jsonArrayItems } from '../../../../src/sources/files/exportShared/jsonArrayItems.js';
import { JSON_LIMITS } from '../../../../src/sources/files/exportShared/parserLimits.js';

/** The bytes in chunks of `size`, so that every element and cell may be cut anywhere. */
const chunked = (text: string, size = 3) => Readable.from(Array.from({ length: Math.ceil(Buffer.byteLength(text) / size) }, (_, i) => Buffer.from(text).subarray(i * size, (i + 1) * size)));

async function collect<T>(it: AsyncIterable<T>): Promise<{ items: T[]; error: unknown }> {
  const items: T[] = [];
  try {
    for await (const x of it) items.push(x);
    return { items, error: null };
  } catch (error) {
    return { items, error };
  }
}

describe('JSON arrays read element by element (Fitbit Global Export Data)', () => {
  it('hands over each element with its index, whatever the chunking and a byte order mark', async () => {
    const { items, error } = await collect(jsonArrayItems(chunked('\ufeff[{"dateTime":"04/14/23 10:19:12","value":{"bpm":106}}, {"v":"é"}, 3]', 2)));
    expect(error).toBeNull();
    expect(items).toEqual([
      { index: 0, value: { dateTime: '04/14/23 10:19:12', value: { bpm: 106 } } },
      { index: 1, value: { v: 'é' } },
      { index: 2, value: 3 },
    ]);
  });

  it('keeps the elements before a break and names the index the file broke in', async () => {
    const { items, error } = await collect(jsonArrayItems(chunked('[{"a":1},{"a":2},{"a":')));
    expect(items.map((i) => i.index)).toEqual([0, 1]);
    expect(error).toBeInstanceOf(JsonArrayError);
    expect((error as JsonArrayError).index).toBe(2);
  });

  it('refuses a file that is not an array, an empty file, and an element larger than the bound', async () => {
    expect(((await collect(jsonArrayItems(chunked('{"a":1}')))).error as JsonArrayError).message).toMatch(/not a JSON array/);
    expect(((await collect(jsonArrayItems(chunked('  ')))).error as JsonArrayError).message).toMatch(/empty file/);
    const huge = `[{"a":"${'x'.repeat(5000)}"}]`;
    const { error } = await collect(jsonArrayItems(chunked(huge, 1000), { maxElementBytes: 2000 }));
    expect((error as JsonArrayError).message).toBe('an element larger than 2000 bytes');
  });
});

describe('contracts §18 (issue 34): JSON elements bounded inside the heap cap', () => {
  it('ends the file at an element nested deeper than the bound, keeping the elements before it', async () => {
    const deep = `[{"a":1},${'['.repeat(100)}1${']'.repeat(100)},{"a":2}]`;
    const { items, error } = await collect(jsonArrayItems(chunked(deep, 64)));
    expect(items.map((i) => i.index)).toEqual([0]);
    expect(error).toBeInstanceOf(JsonArrayError);
    expect([(error as JsonArrayError).message, (error as JsonArrayError).index]).toEqual([`values nested deeper than ${JSON_LIMITS.maxDepth}`, 1]);
  });

  it('ends the file at an element of more tokens than the bound (a million empty objects in 3 MB), before building it', async () => {
    const many = `[{"a":1},[${'{},'.repeat(1_000_000)}{}]]`;
    const { items, error } = await collect(jsonArrayItems(chunked(many, 64 * 1024)));
    expect(items.map((i) => i.index)).toEqual([0]);
    expect([(error as JsonArrayError).message, (error as JsonArrayError).index]).toEqual([`an element of more than ${JSON_LIMITS.maxElementTokens} JSON tokens`, 1]);
  });
});

describe('CSV tables read row by row (Samsung Health, Fitbit CSV layout)', () => {
  it('skips a metadata line, names columns, drops the trailing empty cell and keeps file line numbers', async () => {
    const text = 'com.samsung.health.weight,6233003,10\nweight,start_time,comment\n70.5,2020-01-01 10:00:00.000,"two\nlines",\n71,2020-01-02 10:00:00.000,,\n';
    const { items } = await collect(csvTable(chunked(text, 5), { skipLines: 1, trailingComma: true, names: (h) => h.map((c) => c.toUpperCase()) }));
    expect(items).toEqual([
      { header: ['WEIGHT', 'START_TIME', 'COMMENT'], line: 2 },
      { line: 4, values: { WEIGHT: '70.5', START_TIME: '2020-01-01 10:00:00.000', COMMENT: 'two\nlines' } },
      { line: 5, values: { WEIGHT: '71', START_TIME: '2020-01-02 10:00:00.000', COMMENT: undefined } },
    ]);
  });

  it('hands back a row it cannot read with its line, and short rows leave their missing cells undefined', async () => {
    const { items } = await collect(csvTable(chunked('a,b\n1,2\n3\n4,"open\n5,6\n')));
    expect(items).toEqual([{ header: ['a', 'b'], line: 1 }, { line: 2, values: { a: '1', b: '2' } }, { line: 3, values: { a: '3' } }, { skipped: expect.objectContaining({ line: 5, reason: expect.stringMatching(/Quote Not Closed/) }) }]);
  });
});
