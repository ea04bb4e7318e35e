import { createGunzip, gunzipSync } from 'node:zlib';

/** The gzip stream is broken or cut short: the inflater's own words. */
export class GzipError extends Error {
  override name = 'GzipError';
}

/**
 * Gzip bodies up to this size are inflated in one synchronous call instead of through a stream
 * (issue 37: a one-line upload's stream cost more than the rest of its checks and its parsing).
 * Deflate inflates at most 1,032 times, so what such a body inflates to is bounded
 * (SMALL_GZIP_MAX_OUTPUT, about 2 MiB, a millisecond or two of a thread at worst).
 */
export const SMALL_GZIP_BYTES = 2 * 1024;
const SMALL_GZIP_MAX_OUTPUT = SMALL_GZIP_BYTES * 1032 + 64 * 1024;

/**
 * A small gzip body inflated at once: null when it is larger than SMALL_GZIP_BYTES or past the
 * bound (which deflate cannot reach: the streamed path, with its own limits, then decides);
 * a broken stream throws GzipError.
 */
export function inflateSmallGzip(payload: Buffer): Buffer | null {
  if (payload.length > SMALL_GZIP_BYTES) return null;
  try {
    return gunzipSync(payload, { maxOutputLength: SMALL_GZIP_MAX_OUTPUT });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return null;
    throw new GzipError(err instanceof Error ? err.message : String(err));
  }
}

/**
 * A gzip payload inflated chunk by chunk (at most `chunkSize` bytes each), so a parser holds one
 * chunk of a large upload at a time. A broken or truncated stream throws GzipError after the
 * chunks that inflated; stopping early releases the inflater.
 */
export async function* gunzipChunks(payload: Buffer, chunkSize = 64 * 1024): AsyncGenerator<Buffer> {
  let small: Buffer | null = null;
  try {
    small = inflateSmallGzip(payload);
  } catch {
    // Broken: the stream below yields what inflates before the break, then throws its GzipError.
  }
  if (small) {
    for (let at = 0; at < small.length; at += chunkSize) yield small.subarray(at, at + chunkSize);
    return;
  }
  const gunzip = createGunzip({ chunkSize });
  gunzip.end(payload);
  const chunks = gunzip[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (err) {
        throw new GzipError(err instanceof Error ? err.message : String(err));
      }
      if (next.done) return;
      yield next.value;
    }
  } finally {
    gunzip.destroy();
  }
}
