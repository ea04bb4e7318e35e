import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chunkedLayout, chunkSealer, openChunkedRange, sealChunked } from '../../src/crypto/chunkedSealing.js';

/** Imports sealed in chunks are read by range (contracts §13) and refuse tampering (docs/erasure.md). */

const KEY = randomBytes(32);
const AAD = 'key-1';
const CHUNK = 1000;

async function collect(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of r) parts.push(p as Buffer);
  return Buffer.concat(parts);
}

function rangeOf(sealed: Buffer, start: number, end: number, key = KEY): Promise<Buffer> {
  const layout = chunkedLayout(sealed.subarray(0, 64), sealed.length);
  // The raw store hands out ranges in uneven pieces, as files and GridFS do.
  const read = (s: number, e: number) => Readable.from([sealed.subarray(s, Math.min(e, s + 333)), sealed.subarray(Math.min(e, s + 333), e)].filter((b) => b.length > 0));
  return collect(openChunkedRange(key, AAD, layout, read, start, end));
}

describe('chunk sealing of imports', () => {
  it.each([0, 1, 999, 1000, 1001, 5000, 5432])('a %i-byte payload sealed as a stream equals the one sealed whole, and every range reads back exactly', async (size) => {
    const plain = randomBytes(size);
    const streamed = await collect(Readable.from([plain.subarray(0, 17), plain.subarray(17)]).pipe(chunkSealer(KEY, AAD, CHUNK)));
    expect(chunkedLayout(streamed.subarray(0, 64), streamed.length).plainSize).toBe(size);
    const whole = sealChunked(KEY, AAD, plain, CHUNK);
    expect(whole.length).toBe(streamed.length);
    for (const [s, e] of [[0, size], [0, 1], [size - 1, size], [CHUNK - 3, CHUNK + 3], [1500, 4100], [7, size + 100]]) {
      const from = Math.max(0, Math.min(s!, size));
      expect(await rangeOf(streamed, from, e!)).toEqual(plain.subarray(from, Math.min(e!, size)));
    }
  });

  it('refuses an object cut short at a chunk boundary, a chunk swapped with another, another key', async () => {
    const plain = randomBytes(3500);
    const sealed = sealChunked(KEY, AAD, plain, CHUNK);
    const stride = CHUNK + 28;
    const header = 12;
    const cut = sealed.subarray(0, header + 2 * stride);
    await expect(rangeOf(cut, 0, 2000)).rejects.toThrow(/does not open/);
    const swapped = Buffer.concat([sealed.subarray(0, header), sealed.subarray(header + stride, header + 2 * stride), sealed.subarray(header, header + stride), sealed.subarray(header + 2 * stride)]);
    await expect(rangeOf(swapped, 0, 100)).rejects.toThrow(/does not open/);
    await expect(rangeOf(sealed, 0, 100, randomBytes(32))).rejects.toThrow(/does not open/);
  });
});
