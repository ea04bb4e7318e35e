import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { PayloadCipherError } from './payloadCipher.js';

/**
 * Imports are sealed in chunks (docs/erasure.md, contracts §13): one AES-256-GCM seal over a 5 GB
 * export could only be opened whole, and an import is read by range (a zip's central directory
 * first, then entry by entry). Each chunk of CHUNK plaintext bytes is sealed on its own with a
 * fresh IV; its index and whether it is the last chunk are in the additional data, so chunks
 * cannot be reordered, dropped, or the object cut short without the opening failing.
 *
 * Layout: MAGIC (8) · chunk size (u32 BE) · then per chunk: IV (12) · tag (16) · ciphertext.
 */
const MAGIC = Buffer.from('WSSEAL2\u0000', 'latin1');
const HEADER = MAGIC.length + 4;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const OVERHEAD = IV_BYTES + TAG_BYTES;
export const SEAL_CHUNK = 1024 * 1024;

export function isChunkSealed(head: Buffer): boolean {
  return head.length >= HEADER && head.subarray(0, MAGIC.length).equals(MAGIC);
}

const chunkAad = (aad: string, index: number, last: boolean) => Buffer.from(`${aad}\u0000${index}\u0000${last ? 'last' : 'more'}`);

function sealChunk(key: Buffer, aad: string, index: number, last: boolean, plain: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(chunkAad(aad, index, last));
  const ct = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ct]);
}

function openChunk(key: Buffer, aad: string, index: number, last: boolean, sealed: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(chunkAad(aad, index, last));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, OVERHEAD));
  try {
    const plain = decipher.update(sealed.subarray(OVERHEAD));
    // GCM's final() only checks the tag (it returns no bytes): no second copy of the chunk.
    const rest = decipher.final();
    return rest.length === 0 ? plain : Buffer.concat([plain, rest]);
  } catch {
    throw new PayloadCipherError(`sealed chunk ${index} does not open`);
  }
}

/** A stream that seals what passes through it, chunk by chunk (memory: about two chunks). */
export function chunkSealer(key: Buffer, aad: string, chunkSize = SEAL_CHUNK): Transform {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let index = 0;
  const header = Buffer.alloc(HEADER);
  MAGIC.copy(header);
  header.writeUInt32BE(chunkSize, MAGIC.length);
  let started = false;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (!started) {
        this.push(header);
        started = true;
      }
      pending.push(chunk);
      pendingBytes += chunk.length;
      // A full chunk is sealed once a byte beyond it arrived: only then is it known not to be the last.
      if (pendingBytes > chunkSize) {
        let all: Buffer = Buffer.concat(pending);
        while (all.length > chunkSize) {
          this.push(sealChunk(key, aad, index++, false, all.subarray(0, chunkSize)));
          all = all.subarray(chunkSize);
        }
        pending = [Buffer.from(all)];
        pendingBytes = all.length;
      }
      done();
    },
    flush(done) {
      if (!started) this.push(header);
      this.push(sealChunk(key, aad, index, true, Buffer.concat(pending)));
      pending = [];
      done();
    },
  });
}

/** Seals a whole buffer in the chunked layout (an import sent in one request). */
export function sealChunked(key: Buffer, aad: string, data: Buffer, chunkSize = SEAL_CHUNK): Buffer {
  const header = Buffer.alloc(HEADER);
  MAGIC.copy(header);
  header.writeUInt32BE(chunkSize, MAGIC.length);
  const parts: Buffer[] = [header];
  const chunks = Math.max(1, Math.ceil(data.length / chunkSize));
  for (let i = 0; i < chunks; i++) parts.push(sealChunk(key, aad, i, i === chunks - 1, data.subarray(i * chunkSize, (i + 1) * chunkSize)));
  return Buffer.concat(parts);
}

/** The plaintext size of a chunk-sealed object of `sealedSize` bytes, and its chunk size. */
export function chunkedLayout(head: Buffer, sealedSize: number): { chunkSize: number; chunks: number; plainSize: number } {
  if (!isChunkSealed(head)) throw new PayloadCipherError('not a chunk-sealed payload');
  const chunkSize = head.readUInt32BE(MAGIC.length);
  const body = sealedSize - HEADER;
  const chunks = Math.ceil(body / (chunkSize + OVERHEAD));
  if (chunks < 1 || body - chunks * OVERHEAD < 0) throw new PayloadCipherError('chunk-sealed payload is cut short');
  return { chunkSize, chunks, plainSize: body - chunks * OVERHEAD };
}

/**
 * Plaintext [start, end) of a chunk-sealed object, read through `readSealed` (a raw store's range
 * read): only the chunks the range touches are read and opened, one at a time.
 */
export function openChunkedRange(
  key: Buffer,
  aad: string,
  layout: { chunkSize: number; chunks: number; plainSize: number },
  readSealed: (start: number, end: number) => Readable,
  start: number,
  end: number,
): Readable {
  const { chunkSize, chunks, plainSize } = layout;
  const to = Math.min(end, plainSize);
  if (to <= start) return Readable.from([]);
  const first = Math.floor(start / chunkSize);
  const last = Math.floor((to - 1) / chunkSize);
  const stride = chunkSize + OVERHEAD;
  async function* chunksOf(): AsyncGenerator<Buffer> {
    const sealed = readSealed(HEADER + first * stride, Math.min(HEADER + (last + 1) * stride, HEADER + plainSize + chunks * OVERHEAD));
    let buf: Buffer = Buffer.alloc(0);
    let index = first;
    const emit = (plain: Buffer, i: number) => {
      const from = i === first ? start - i * chunkSize : 0;
      const until = i === last ? to - i * chunkSize : plain.length;
      return plain.subarray(from, until);
    };
    // The parts of the next chunk, joined once it is whole: joining each part as it came copied
    // a chunk's bytes two or three times over (the store reads in 256 KiB parts).
    const parts: Buffer[] = [];
    let pending = 0;
    for await (const part of sealed) {
      parts.push(part as Buffer);
      pending += (part as Buffer).length;
      if (buf.length + pending < stride) continue;
      buf = buf.length || parts.length > 1 ? Buffer.concat(buf.length ? [buf, ...parts] : parts) : parts[0]!;
      parts.length = 0;
      pending = 0;
      while (index <= last && buf.length >= stride) {
        yield emit(openChunk(key, aad, index, index === chunks - 1, buf.subarray(0, stride)), index);
        buf = buf.subarray(stride);
        index++;
      }
    }
    if (parts.length) buf = Buffer.concat([buf, ...parts]);
    if (index === last && index === chunks - 1 && buf.length >= OVERHEAD) {
      yield emit(openChunk(key, aad, index, true, buf), index);
      index++;
    }
    if (index <= last) throw new PayloadCipherError('chunk-sealed payload is cut short');
  }
  return Readable.from(chunksOf(), { objectMode: false });
}
