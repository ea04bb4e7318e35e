import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeOwnedTemporaryFiles, removeStaleTemporaryFiles, removeTemporaryFile, spillToTemporaryFile, temporaryFilePath, TooLargeError } from '../../../../src/sources/files/exportShared/temporaryFile.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'spill-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('plaintext temporary copies of an upload (docs/formats/health-connect.md "Erasure")', () => {
  it('writes a file only the service can read, and removes it with its journal files', async () => {
    const path = await spillToTemporaryFile(Readable.from([Buffer.from('abc'), Buffer.from('def')]), join(dir, 'imports'), '.db', 100);
    expect(readFileSync(path, 'utf8')).toBe('abcdef');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    writeFileSync(`${path}-journal`, 'j');
    await removeTemporaryFile(path);
    expect(readdirSync(join(dir, 'imports'))).toEqual([]);
  });

  it('stops past the limit and leaves nothing behind', async () => {
    await expect(spillToTemporaryFile(Readable.from([Buffer.alloc(60), Buffer.alloc(60)]), dir, '.db', 100)).rejects.toBeInstanceOf(TooLargeError);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('removes at start-up the copies a crash left, and nothing else', async () => {
    await spillToTemporaryFile(Readable.from([Buffer.from('x')]), dir, '.db', 10);
    writeFileSync(join(dir, 'keep.txt'), 'k');
    expect(await removeStaleTemporaryFiles(dir)).toBe(1);
    expect(readdirSync(dir)).toEqual(['keep.txt']);
    expect(await removeStaleTemporaryFiles(join(dir, 'missing'))).toBe(0);
  });

  it('contracts §18 (issue 34 §7): names each copy by an opaque token of its owner, so erasure removes a user’s or one provider’s copies and nothing else', async () => {
    const copy = await spillToTemporaryFile(Readable.from([Buffer.from('x')]), dir, '.db', 10, { userId: 'user-a', provider: 'health-connect' });
    expect(copy).not.toContain('user-a');
    const other = temporaryFilePath(dir, { userId: 'user-a', provider: 'apple-health' }, '-export.zip');
    const someoneElse = temporaryFilePath(dir, { userId: 'user-b', provider: 'health-connect' }, '.db');
    for (const p of [other, someoneElse]) writeFileSync(p, 'x');
    expect(await removeOwnedTemporaryFiles(dir, 'user-a', 'health-connect')).toBe(1);
    expect(readdirSync(dir).sort()).toEqual([other, someoneElse].map((p) => p.slice(dir.length + 1)).sort());
    expect(await removeOwnedTemporaryFiles(dir, 'user-a')).toBe(1);
    expect(readdirSync(dir)).toEqual([someoneElse.slice(dir.length + 1)]);
  });
});
