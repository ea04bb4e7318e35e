import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CursorCodec, InvalidCursorError } from '../../src/shared/cursor.js';

const key = randomBytes(32);
const codec = new CursorCodec(key);

describe('list cursors (Conventions 1; Errors 2: invalid cursor is 400)', () => {
  it('gives back the keyset values it encoded, for the same list (Conventions 1)', () => {
    const values = ['2026-03-01T00:00:00.000Z', 'd3b07384-d113-4ec6-a2b8-9a1f8e0b4c11', 42, null, true];
    expect(codec.decode(codec.encode(values, 'users:t1'), 'users:t1')).toEqual(values);
  });

  it('refuses a cursor of another list or tenant (Errors 2)', () => {
    const cursor = codec.encode([1], 'users:t1');
    expect(() => codec.decode(cursor, 'users:t2')).toThrow(InvalidCursorError);
    expect(() => codec.decode(cursor, 'audit:t1')).toThrow(InvalidCursorError);
  });

  it('refuses a cursor made with another sealing key (Errors 2)', () => {
    const cursor = new CursorCodec(randomBytes(32)).encode([1], 'users:t1');
    expect(() => codec.decode(cursor, 'users:t1')).toThrow(InvalidCursorError);
  });

  it('refuses a cursor with any single character changed (Errors 2)', () => {
    const cursor = codec.encode(['2026-03-01T00:00:00.000Z', 'abc'], 'users:t1');
    for (let i = 0; i < cursor.length; i++) {
      if (cursor[i] === '.') continue;
      const tampered = cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1);
      expect(() => codec.decode(tampered, 'users:t1'), `position ${i}`).toThrow(InvalidCursorError);
    }
  });

  it('refuses a cursor whose values were swapped for others (Errors 2)', () => {
    const real = codec.encode([1], 'users:t1');
    const forged = Buffer.from(JSON.stringify([999])).toString('base64url') + '.' + real.split('.')[1];
    expect(() => codec.decode(forged, 'users:t1')).toThrow(InvalidCursorError);
  });

  it.each(['', 'garbage', 'a.', '.b', 'a.b.c', 'a.b', '%%%.%%%'])('refuses the malformed cursor %j with InvalidCursorError, not another error (Errors 2)', (cursor) => {
    expect(() => codec.decode(cursor, 'users:t1')).toThrow(InvalidCursorError);
  });
});
