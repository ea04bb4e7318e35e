import type { Readable } from 'node:stream';
import type { ParseItem } from '../../../../commands/ingestion/records.js';
import { messageOf, rejectedItem } from './unreadableExport.js';
import type { ArchiveEntry, ZipArchive } from './zipArchive.js';

/**
 * Reads one archive entry through `read`, turning a failure of the entry's own bytes (it cannot
 * be opened, its deflate stream breaks, its size does not match the directory) into a rejected
 * item for the rest of that file: what was read before the break stays read. `broken` may name a
 * break the reader itself found (a JSON file cut mid-element) more precisely. Anything else thrown
 * is a bug in a decoder and fails the job.
 */
export async function* readEntry<T>(
  archive: ZipArchive,
  entry: ArchiveEntry,
  read: (input: Readable) => AsyncIterable<T | ParseItem>,
  broken: (err: unknown) => ParseItem | null = () => null,
): AsyncGenerator<T | ParseItem> {
  let input: Readable;
  try {
    input = await archive.open(entry);
  } catch (err) {
    yield rejectedItem(entry.name, messageOf(err), '');
    return;
  }
  let entryError: unknown = null;
  input.on('error', (err) => {
    entryError ??= err;
  });
  try {
    yield* read(input);
  } catch (err) {
    const item = broken(err) ?? (entryError !== null ? rejectedItem(entry.name, `the rest of the file cannot be read: ${messageOf(entryError)}`, '') : null);
    if (!item) throw err;
    yield item;
  } finally {
    input.destroy();
  }
}
