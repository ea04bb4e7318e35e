import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { zipEntries } from '../../../fixtures/zip/buildZip.js';
import { bufferByteSource, fileByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import { UnreadableExportError } from '../../../../src/sources/files/exportShared/unreadableExport.js';
import { ZIP_LIMITS } from '../../../../src/sources/files/exportShared/parserLimits.js';
import { notAZip, openZipArchive } from '../../../../src/sources/files/exportShared/zipArchive.js';
import { samsungHealthDecoder } from '../../../../src/sources/files/samsung-health/samsungHealthDecoder.js';
import { syntheticZip } from '../../../fixtures/zip/syntheticZip.js';
import { decodeAll } from '../decodeAll.js';

const dir = mkdtempSync(join(tmpdir(), 'zip-archive-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function failure(p: Promise<unknown>): Promise<UnreadableExportError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(UnreadableExportError);
    return err as UnreadableExportError;
  }
  throw new Error('no failure');
}

describe('zip archives read in place by range (issue 21: entry by entry, without extracting)', () => {
  it('lists files in central-directory order, leaves directories out, and reads each from a buffer or a file', async () => {
    const zip = await zipEntries([
      { name: 'b/second.json', data: Buffer.from('[2]') },
      { name: 'a/first.csv', data: Buffer.from('x\n1\n'), compress: false },
      { name: 'big.txt', data: Buffer.from('z'.repeat(300_000)) },
    ]);
    const path = join(dir, 'a.zip');
    writeFileSync(path, zip);
    for (const source of [bufferByteSource(zip), fileByteSource(path)]) {
      const archive = await openZipArchive(source, 'a test zip');
      expect(archive.entries.map((e) => [e.name, e.index, e.uncompressedSize])).toEqual([
        ['b/second.json', 0, 3],
        ['a/first.csv', 1, 4],
        ['big.txt', 2, 300_000],
      ]);
      expect(await text(await archive.open(archive.entries[1]!))).toBe('x\n1\n');
      expect((await text(await archive.open(archive.entries[2]!))).length).toBe(300_000);
      expect(await text(await archive.open(archive.entries[0]!))).toBe('[2]');
      archive.close();
    }
  });

  it('refuses what is not a zip, a truncated zip, and a directory declaring far more than the archive can hold', async () => {
    expect((await failure(openZipArchive(bufferByteSource(Buffer.from('not a zip at all')), 'X'))).message).toMatch(/^not a readable zip archive \(End of central directory record signature not found/);
    const zip = await zipEntries([{ name: 'a.txt', data: Buffer.from('a'.repeat(10_000)) }]);
    expect((await failure(openZipArchive(bufferByteSource(zip.subarray(0, zip.length - 10)), 'X'))).message).toMatch(/^not a readable zip archive/);
    const bomb = await zipEntries([{ name: 'zeros', data: Buffer.alloc(2_000_000) }]);
    const refused = await failure(openZipArchive(bufferByteSource(bomb), 'X', { maxEntries: 10, maxExpansion: 100, minAllowance: 1_000_000 }));
    expect(refused.message).toMatch(/declares 2000000 uncompressed bytes, more than 100 times its own size: refused as a likely zip bomb/);
    const many = await zipEntries(Array.from({ length: 11 }, (_, i) => ({ name: `f${i}`, data: Buffer.from('x') })));
    expect((await failure(openZipArchive(bufferByteSource(many), 'X', { maxEntries: 10, maxExpansion: 100, minAllowance: 1e9 }))).message).toMatch(/lists 11 entries, more than the 10 accepted/);
  });

  it('fails the stream of an entry that inflates to more bytes than the directory declares', async () => {
    const zip = await zipEntries([{ name: 'a.txt', data: Buffer.from('hello world, hello world') }]);
    // Central directory record: uncompressed size at offset 24 of the 0x02014b50 record.
    const cd = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    zip.writeUInt32LE(5, cd + 24);
    const archive = await openZipArchive(bufferByteSource(zip), 'X');
    await expect(text(await archive.open(archive.entries[0]!))).rejects.toThrow(/too many bytes in the stream/);
    archive.close();
  });

  it('tells at the request what a non-zip body is (contracts §12)', () => {
    expect(notAZip(Buffer.from([0x50, 0x4b, 0x03, 0x04]), 'X')).toBeNull();
    expect(notAZip(Buffer.from([0x50, 0x4b, 0x05, 0x06]), 'X')).toBe('an empty zip archive: expected X');
    expect(notAZip(Buffer.from([0x1f, 0x8b, 8]), 'X')).toBe('a gzip file, not a zip archive: expected X');
    expect(notAZip(Buffer.from('<?xml'), 'X')).toBe('not a zip archive (it does not start with a zip local file header): expected X');
    expect(notAZip(Buffer.alloc(0), 'X')).toBe('empty upload: expected X');
  });
});

describe('contracts §18 (issue 34): the central directory and the declared total are bounded before they are held', () => {
  const MiB = 1024 * 1024;

  it('refuses 150,000 entries with 64 KiB extra fields (a 9.8 GB directory) from the end records, reading none of the directory', async () => {
    // Without a bound the reader would walk the directory and keep every extra field outside the heap.
    const source = syntheticZip({ entries: 150_000, extraBytes: 0xffff, readBudget: 256 * MiB });
    expect(source.size).toBeGreaterThan(9.8e9);
    const refused = await failure(openZipArchive(source, 'X'));
    expect(refused.message).toBe(`the archive's central directory takes ${source.size - 30} bytes, more than the ${ZIP_LIMITS.maxCentralDirectoryBytes} accepted`);
    expect(source.bytesRead()).toBeLessThan(MiB);
    // A format's decoder fails the upload with that reason (contracts §12 `error`).
    await expect(decodeAll(samsungHealthDecoder, syntheticZip({ entries: 150_000, extraBytes: 0xffff, readBudget: 256 * MiB }))).rejects.toThrow(/central directory takes \d+ bytes, more than the \d+ accepted/);
  });

  it('refuses a real central directory just over the byte bound, and an entry whose extra field, name or comment is over its own', async () => {
    const perEntry = 46 + 'f00000000.csv'.length + 1000;
    const over = syntheticZip({ entries: Math.floor(ZIP_LIMITS.maxCentralDirectoryBytes / perEntry) + 70, extraBytes: 1000, readBudget: 256 * MiB });
    expect(over.size - 30 - 98).toBeGreaterThan(ZIP_LIMITS.maxCentralDirectoryBytes + 22 + 0xffff);
    expect((await failure(openZipArchive(over, 'X'))).message).toMatch(/^the archive's central directory takes \d+ bytes, more than the 67108864 accepted$/);
    expect(over.bytesRead()).toBeLessThan(MiB);
    const under = syntheticZip({ entries: Math.floor(ZIP_LIMITS.maxCentralDirectoryBytes / perEntry) - 1, extraBytes: 1000 });
    expect((await openZipArchive(under, 'X')).entries).toHaveLength(Math.floor(ZIP_LIMITS.maxCentralDirectoryBytes / perEntry) - 1);

    const wide = syntheticZip({ entries: 3, extraBytes: 2000 });
    expect((await failure(openZipArchive(wide, 'X'))).message).toBe('the archive is refused: an entry\'s extra field takes 2000 bytes, more than the 1024 accepted');
    const zip = await zipEntries([{ name: `${'n'.repeat(1100)}.csv`, data: Buffer.from('x') }]);
    expect((await failure(openZipArchive(bufferByteSource(zip), 'X'))).message).toBe('the archive is refused: an entry\'s name takes 1104 bytes, more than the 1024 accepted');
  });

  it('refuses a declared uncompressed total above the absolute bound, however large the archive', async () => {
    // 2 GiB of archive allows 200 GiB by the 100-times rule alone; 190 GiB declared is over the absolute bound.
    const source = syntheticZip({ entries: 2, extraBytes: 20, uncompressedSize: 95 * 1024 ** 3, dataBytes: 2 * 1024 ** 3 });
    expect((await failure(openZipArchive(source, 'X'))).message).toBe(`the archive declares ${190 * 1024 ** 3} uncompressed bytes, more than the 160.0 GiB accepted from any archive: refused as a likely zip bomb`);
  });
});
