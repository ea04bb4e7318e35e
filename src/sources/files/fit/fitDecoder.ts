import { tmpdir } from 'node:os';
import type { Readable } from 'node:stream';
import type { ParseContext, ParseItem } from '../../../../commands/ingestion/records.js';
import { fileByteSource, readHead } from '../exportShared/byteSources.js';
import { readEntry } from '../exportShared/entryReading.js';
import { FIT_LIMITS } from '../exportShared/parserLimits.js';
import { removeTemporaryFile, spillOwnerOf, spillToTemporaryFile, TooLargeError } from '../exportShared/temporaryFile.js';
import { messageOf, rejectedItem, UnreadableExportError } from '../exportShared/unreadableExport.js';
import { entriesListed, notAZip, openZipArchive, type ArchiveEntry, type ZipArchive } from '../exportShared/zipArchive.js';
import type { ByteSource, ImportDecoder } from '../importSource.js';
import { fitHeaderProblem } from './fitMessages.js';
import { fitFileItems } from './fitRecords.js';

/**
 * fit (contracts §20): one .fit file, or a zip of them (Garmin's account export, a device tool's
 * folder zipped). Each .fit file is read whole (at most FIT_LIMITS.maxFileBytes) and decoded
 * message by message; a zip inside the zip is read one level deep, from a temporary copy in
 * `tempDir` (a zip is read by range, from its end). Mapping: docs/formats/fit.md.
 */

export const FIT_SLUG = 'fit';
const WHAT = 'a FIT file (.fit) or a zip of .fit files';

const isZipHead = (head: Buffer) => notAZip(head, WHAT) === null;
const isFitName = (name: string) => name.toLowerCase().endsWith('.fit');
const isZipName = (name: string) => name.toLowerCase().endsWith('.zip');

/** Why these first bytes are neither a FIT file nor a zip archive, or null. */
export function fitSniff(head: Buffer): string | null {
  if (head.length === 0) return `empty upload: expected ${WHAT}`;
  if (isZipHead(head)) return null;
  const problem = fitHeaderProblem(head);
  return problem === null ? null : `neither a FIT file (${problem}) nor a zip archive`;
}

export type FitDecoderOptions = { tempDir?: string };

export function fitDecoder(options: FitDecoderOptions = {}): ImportDecoder {
  return {
    slug: FIT_SLUG,
    sniff: fitSniff,
    decode: (source, ctx) => unreadableWithoutRecords(decodeFit(source, ctx, options.tempDir ?? tmpdir())),
  };
}

/** Rejections held while no record has come; past this many they go out, and the upload can no longer fail as a whole. */
const HELD_REJECTIONS = 1000;

/**
 * contracts §17: an upload that yields no record at all is unreadable, not `done` with nothing
 * stored. Rejections are held until the first record; if none comes, the first one is the
 * upload's error.
 */
async function* unreadableWithoutRecords(items: AsyncIterable<ParseItem>): AsyncGenerator<ParseItem> {
  const held: ParseItem[] = [];
  let recorded = false;
  for await (const item of items) {
    if (recorded || 'record' in item || held.length >= HELD_REJECTIONS) {
      recorded = true;
      yield* held.splice(0);
      yield item;
    } else held.push(item);
  }
  if (!recorded && held.length === 0) throw new UnreadableExportError('the file', 'nothing to import: no session, no record with a heart rate, no monitoring or weight-scale message');
  const first = held[0];
  if (!recorded && first && 'rejected' in first) throw new UnreadableExportError(first.rejected.location, `${first.rejected.location}: ${first.rejected.reason}`);
  yield* held;
}

async function* decodeFit(source: ByteSource, ctx: ParseContext, tempDir: string): AsyncGenerator<ParseItem> {
  const head = await readHead(source, 14);
  if (!isZipHead(head)) {
    const problem = fitHeaderProblem(head);
    if (problem) throw new UnreadableExportError('the file', `not ${WHAT}: ${problem}`);
    if (source.size > FIT_LIMITS.maxFileBytes) throw new UnreadableExportError('the file', `a FIT file of ${source.size} bytes is larger than the ${FIT_LIMITS.maxFileBytes} bytes one is read up to`);
    yield* fitFileItems(await bytesOf(source.read(0, source.size), source.size), 'the file', ctx.provider);
    return;
  }
  const archive = await openZipArchive(source, WHAT);
  try {
    if (!archive.entries.some((e) => isFitName(e.name) || isZipName(e.name))) {
      throw new UnreadableExportError('archive', `not ${WHAT}: the archive holds no .fit file; it holds ${entriesListed(archive.entries)}`);
    }
    yield* zipItems(archive, '', ctx, tempDir);
  } finally {
    archive.close();
  }
}

/** The .fit files of a zip; with `tempDir` (the upload's own zip), the zips inside it too. */
async function* zipItems(archive: ZipArchive, prefix: string, ctx: ParseContext, tempDir: string | null): AsyncGenerator<ParseItem> {
  for (const entry of archive.entries) {
    const where = `${prefix}${entry.name}`;
    if (isFitName(entry.name)) {
      if (entry.uncompressedSize > FIT_LIMITS.maxFileBytes) {
        yield rejectedItem(where, `a FIT file of ${entry.uncompressedSize} bytes is larger than the ${FIT_LIMITS.maxFileBytes} bytes one is read up to`, '');
        continue;
      }
      yield* readEntry<ParseItem>(
        archive,
        entry,
        async function* (input) {
          yield* fitFileItems(await bytesOf(input, entry.uncompressedSize), where, ctx.provider);
        },
        (err) => (err instanceof RangeError ? rejectedItem(where, err.message, '') : null),
      );
    } else if (isZipName(entry.name)) {
      if (tempDir === null) yield rejectedItem(where, 'a zip inside a zip inside the upload is not read (one level of nesting is)', '');
      else if (entry.uncompressedSize > FIT_LIMITS.maxNestedZipBytes) yield rejectedItem(where, `a zip of ${entry.uncompressedSize} bytes inside the zip is larger than the ${FIT_LIMITS.maxNestedZipBytes} bytes one is read up to`, '');
      else yield* nestedZipItems(archive, entry, where, ctx, tempDir);
    }
  }
}

/** A zip inside the upload's zip, copied to a temporary file (removed after) and read like the upload's. */
async function* nestedZipItems(archive: ZipArchive, entry: ArchiveEntry, where: string, ctx: ParseContext, tempDir: string): AsyncGenerator<ParseItem> {
  let path: string;
  try {
    path = await spillToTemporaryFile(await archive.open(entry), tempDir, '-fit.zip', FIT_LIMITS.maxNestedZipBytes, spillOwnerOf(ctx));
  } catch (err) {
    yield rejectedItem(where, err instanceof TooLargeError ? `more than the ${FIT_LIMITS.maxNestedZipBytes} bytes a zip inside the zip is read up to` : `cannot be read: ${messageOf(err)}`, '');
    return;
  }
  try {
    let inner: ZipArchive;
    try {
      inner = await openZipArchive(fileByteSource(path), WHAT);
    } catch (err) {
      if (!(err instanceof UnreadableExportError)) throw err;
      yield rejectedItem(where, err.message, '');
      return;
    }
    try {
      yield* zipItems(inner, `${where}/`, ctx, null);
    } finally {
      inner.close();
    }
  } finally {
    await removeTemporaryFile(path);
  }
}

/** A stream's bytes whole, refusing more than `declared` (the directory's or the source's size). */
async function bytesOf(input: Readable, declared: number): Promise<Uint8Array> {
  const out = new Uint8Array(declared);
  let n = 0;
  for await (const chunk of input) {
    const b = chunk as Buffer;
    if (n + b.length > declared) throw new RangeError(`more bytes than the ${declared} declared`);
    out.set(b, n);
    n += b.length;
  }
  return n === declared ? out : out.subarray(0, n);
}
