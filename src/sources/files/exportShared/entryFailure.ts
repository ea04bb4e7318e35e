import type { Readable } from 'node:stream';

/**
 * Remembers a failure of an archive entry's own bytes (a broken deflate stream, a size that does
 * not match the directory), so a decoder can tell it from a bug of its own: the first is the rest
 * of that file rejected, the second a failed job.
 */
export function watchEntry(input: Readable): { error: unknown } {
  const state: { error: unknown } = { error: null };
  input.on('error', (err) => {
    state.error ??= err;
  });
  return state;
}
