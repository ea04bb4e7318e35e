import { Transform } from 'node:stream';
import { chunkedLayout, isChunkSealed, openChunkedRange } from '../../crypto/chunkedSealing.js';
import { isSealedBytes, openBytes } from '../../crypto/payloadCipher.js';
import type { RawStore } from '../../rawstore/rawStore.js';
import type { ByteSource } from '../../sources/files/importSource.js';
import { bufferByteSource, readHead } from '../../sources/files/exportShared/byteSources.js';

/** A ByteSource that also tells how many of its bytes were handed out (an import's `progress.bytes_read`). */
export type CountedByteSource = ByteSource & { readonly bytesRead: number };

const HEAD = 64;

/**
 * The plaintext of a stored import as a ByteSource, read by range from the raw store: a
 * chunk-sealed object (src/crypto/chunkedSealing.ts) opens only the chunks a read touches, so
 * memory does not grow with the import. An object sealed whole (older uploads) is opened into
 * memory, as the device parsers always did; one stored in the clear is read by range.
 */
export async function rawByteSource(rawStore: RawStore, key: string, dataKey: { key: Buffer; keyId: string } | null): Promise<CountedByteSource> {
  const sealedSize = await rawStore.size(key);
  const head = await readHead({ size: sealedSize, read: (s, e) => rawStore.readRange(key, s, e) }, HEAD);
  let inner: ByteSource;
  if (dataKey && isChunkSealed(head)) {
    const layout = chunkedLayout(head, sealedSize);
    inner = {
      size: layout.plainSize,
      read: (start, end) => openChunkedRange(dataKey.key, dataKey.keyId, layout, (s, e) => rawStore.readRange(key, s, e), start, end),
    };
  } else if (dataKey && isSealedBytes(head)) {
    inner = bufferByteSource(openBytes(dataKey.key, await rawStore.get(key), dataKey.keyId));
  } else {
    inner = { size: sealedSize, read: (s, e) => rawStore.readRange(key, s, e) };
  }
  return counted(inner);
}

function counted(inner: ByteSource): CountedByteSource {
  let read = 0;
  return {
    size: inner.size,
    get bytesRead() {
      return Math.min(read, inner.size);
    },
    read(start, end) {
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          read += chunk.length;
          done(null, chunk);
        },
      });
      const source = inner.read(start, end);
      source.once('error', (err) => counter.destroy(err));
      return source.pipe(counter);
    },
  };
}
