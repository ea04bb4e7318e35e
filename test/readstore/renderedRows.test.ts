import { describe, expect, it } from 'vitest';
import { renderDoc, type RenderTemplate } from '../../src/readstore/renderedRows.js';

// Every kind, over fields present and missing, a missing text, and a key that needs escaping.
const TEMPLATE: RenderTemplate = [
  { key: 'n', field: 'n', as: 'value' },
  { key: 's', field: 's', as: 'string' },
  { key: 'v', field: 'v', as: 'value', missing: '"none"' },
  { key: 'b', field: 'b', as: 'boolean' },
  { key: 'notB', field: 'b', as: 'notTrue' },
  { key: 'bAsValue', field: 'b', as: 'value' },
  { key: 'vAsBoolean', field: 'v', as: 'boolean' },
  { key: 'notV', field: 'v', as: 'notTrue' },
  { key: 'meta', field: 'meta', as: 'value', missing: '[]' },
  { key: 'flag', field: 'flag', as: 'boolean' },
  { key: 'notFlag', field: 'flag', as: 'notTrue' },
  { key: 'str', field: 'str', as: 'string' },
  { key: 'key with "quotes"', field: 's', as: 'string' },
];

describe('a rendering template (renderedRows.ts: the meaning of a page written as JSON, issues 27 and 38)', () => {
  it('renderDoc writes what JSON.stringify writes of the object the template names', () => {
    const doc = { _id: 'x', n: 1.5, s: 'a"b', v: { z: [1] }, b: true, meta: undefined, flag: false, str: null };
    expect(JSON.parse(renderDoc(TEMPLATE, doc))).toEqual({
      n: 1.5, s: 'a"b', v: { z: [1] }, b: true, notB: false, bAsValue: true, vAsBoolean: true, notV: true, meta: [], flag: false, notFlag: true, str: null, 'key with "quotes"': 'a"b',
    });
  });
});
