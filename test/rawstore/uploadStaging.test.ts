import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UploadStaging } from '../../src/rawstore/uploadStaging.js';
import { tempDir } from '../support/tmp.js';

async function readAll(staging: UploadStaging, key: { key: Buffer; keyId: string }): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of staging.read('u1', 's1', key)) parts.push(p as Buffer);
  return Buffer.concat(parts);
}

async function* partsOf(bytes: Buffer, sizes: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const n = sizes[i % sizes.length]!;
    yield bytes.subarray(at, at + n);
    at += n;
  }
}

describe('tus staging: chunks joined from the parts that brought them', () => {
  it('parts of any size, across several chunks and two requests (the second resuming from a tail), read back as sent, and the offset is every byte', async () => {
    const staging = new UploadStaging(tempDir());
    const key = { key: randomBytes(32), keyId: 'k1' };
    const bytes = randomBytes(3 * 1024 * 1024 + 12_345);
    const first = bytes.subarray(0, 1_500_000);
    // Odd part sizes, one larger than a chunk: a chunk's bytes come from several parts, and one part fills more than one chunk.
    expect(await staging.append('u1', 's1', key, partsOf(first, [65_536, 1_000, 2_200_000, 7]), bytes.length)).toBe(first.length);
    expect(await staging.offset('u1', 's1', key)).toBe(first.length);
    expect(await staging.append('u1', 's1', key, partsOf(bytes.subarray(first.length), [300_001, 64 * 1024]), bytes.length)).toBe(bytes.length);
    expect((await readAll(staging, key)).equals(bytes)).toBe(true);
  });
});
