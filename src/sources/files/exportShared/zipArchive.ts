import { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { ByteSource } from '../importSource.js';
import { messageOf, UnreadableExportError } from './unreadableExport.js';

/**
 * A zip archive read in place, entry by entry, through range reads of its ByteSource: nothing is
 * extracted and the archive is never held in memory. yauzl reads it: it is the long-maintained
 * reader that reads the central directory (not the local headers a streaming unzipper trusts),
 * handles zip64 and data descriptors (Java's ZipOutputStream, which Health Connect uses, writes
 * them), checks every entry's size against the directory, and takes any random-access source
 * through its RandomAccessReader, which is exactly a ByteSource.
 *
 * Hostile archives: the entry count and the total uncompressed size the directory declares are
 * bounded before any entry is read (a zip bomb declares what it inflates to, and yauzl refuses an
 * entry that inflates to more than it declared), and entry names are only ever compared, never
 * used as paths.
 */

export type ZipLimits = {
  /** Entries in the central directory. */
  maxEntries: number;
  /** The declared uncompressed total may be this many times the archive's size… */
  maxExpansion: number;
  /** …and at least this many bytes (small archives of well-compressed text). */
  minAllowance: number;
};

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxEntries: 200_000, maxExpansion: 100, minAllowance: 1024 ** 3 };

export type ArchiveEntry = {
  /** The path inside the archive, as stored (forward slashes). */
  readonly name: string;
  /** Position in the central directory: entries are always visited in this order. */
  readonly index: number;
  readonly uncompressedSize: number;
  readonly compressedSize: number;
};

export interface ZipArchive {
  /** Files in central-directory order (directories left out). */
  readonly entries: readonly ArchiveEntry[];
  /** The entry's inflated bytes; the stream errors if they do not match the directory. */
  open(entry: ArchiveEntry): Promise<Readable>;
  close(): void;
}

const ZIP_LOCAL_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const ZIP_EMPTY_ARCHIVE = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
const GZIP = Buffer.from([0x1f, 0x8b]);
const SQLITE = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Why a body cannot be a zip archive, judged from its first bytes, or null. `what` names the
 * export in the message ("the zip Health Connect's Export data writes").
 */
export function notAZip(head: Buffer, what: string): string | null {
  if (head.length === 0) return `empty upload: expected ${what}`;
  if (head.length >= 4 && head.subarray(0, 4).equals(ZIP_LOCAL_HEADER)) return null;
  if (head.length >= 4 && head.subarray(0, 4).equals(ZIP_EMPTY_ARCHIVE)) return `an empty zip archive: expected ${what}`;
  if (head.length >= 2 && head.subarray(0, 2).equals(GZIP)) return `a gzip file, not a zip archive: expected ${what}`;
  if (head.length >= SQLITE.length && head.subarray(0, SQLITE.length).equals(SQLITE)) return `an SQLite database, not a zip archive: expected ${what}`;
  return `not a zip archive (it does not start with a zip local file header): expected ${what}`;
}

/** Header reads (central directory records, local headers) are served from one window of this size. */
const WINDOW_BYTES = 256 * 1024;

/**
 * yauzl asks for many small reads while it walks the central directory (two per entry) and for
 * each entry's local header; a ByteSource read may be costly (a sealed object decrypts a chunk),
 * so small reads are served from a window read once. Entry data streams go to the source directly
 * unless they lie inside the window (small entries right after their header).
 */
class ByteSourceReader extends yauzl.RandomAccessReader {
  private window: { start: number; bytes: Buffer } | null = null;

  constructor(private readonly source: ByteSource) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const w = this.window;
    if (w && start >= w.start && end <= w.start + w.bytes.length) return Readable.from([w.bytes.subarray(start - w.start, end - w.start)]);
    return this.source.read(start, end);
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null, bytesRead?: number) => void): void {
    const w = this.window;
    if (w && position >= w.start && position + length <= w.start + w.bytes.length) {
      w.bytes.copy(buffer, offset, position - w.start, position - w.start + length);
      setImmediate(() => callback(null, length));
      return;
    }
    const end = Math.min(this.source.size, position + Math.max(length, WINDOW_BYTES));
    readRange(this.source, position, end).then(
      (bytes) => {
        if (bytes.length < length) return callback(new Error('unexpected end of the archive'));
        this.window = { start: position, bytes };
        bytes.copy(buffer, offset, 0, length);
        callback(null, length);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
    );
  }
}

async function readRange(source: ByteSource, start: number, end: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source.read(start, end)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Opens the archive and reads its central directory; UnreadableExportError when it is not a readable zip. */
export async function openZipArchive(source: ByteSource, what: string, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ZipArchive> {
  const reader = new ByteSourceReader(source);
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromRandomAccessReaderPromise(reader, source.size, { autoClose: false, lazyEntries: true, decodeStrings: true, validateEntrySizes: true, strictFileNames: false });
  } catch (err) {
    throw new UnreadableExportError('archive', `not a readable zip archive (${messageOf(err)}): expected ${what}`);
  }
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw new UnreadableExportError('archive', `the archive lists ${zip.entryCount} entries, more than the ${limits.maxEntries} accepted`);
    }
    const entries: (ArchiveEntry & { raw: yauzl.Entry })[] = [];
    let declared = 0;
    let index = 0;
    try {
      for await (const raw of zip.eachEntry()) {
        const i = index++;
        if (raw.fileName.endsWith('/')) continue;
        declared += raw.uncompressedSize;
        entries.push({ name: raw.fileName, index: i, uncompressedSize: raw.uncompressedSize, compressedSize: raw.compressedSize, raw });
      }
    } catch (err) {
      throw new UnreadableExportError('archive', `damaged zip archive: its central directory cannot be read (${messageOf(err)})`);
    }
    const allowance = Math.max(limits.minAllowance, source.size * limits.maxExpansion);
    if (declared > allowance) {
      throw new UnreadableExportError('archive', `the archive declares ${declared} uncompressed bytes, more than ${limits.maxExpansion} times its own size: refused as a likely zip bomb`);
    }
    const byIndex = new Map(entries.map((e) => [e.index, e.raw]));
    return {
      entries: entries.map(({ raw: _raw, ...e }) => e),
      async open(entry: ArchiveEntry): Promise<Readable> {
        const raw = byIndex.get(entry.index);
        if (!raw) throw new Error(`no entry ${entry.index} in this archive`);
        if (raw.isEncrypted()) throw new UnreadableExportError(entry.name, `${entry.name} is encrypted`);
        if (!raw.canDecodeFileData()) throw new UnreadableExportError(entry.name, `${entry.name} uses compression method ${raw.compressionMethod}, which is not supported (only stored and deflate)`);
        try {
          return await zip.openReadStreamPromise(raw);
        } catch (err) {
          throw new UnreadableExportError(entry.name, `${entry.name} cannot be read: ${messageOf(err)}`);
        }
      },
      close() {
        zip.close();
      },
    };
  } catch (err) {
    zip.close();
    throw err;
  }
}

/** The last path segment of an entry name. */
export function baseName(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}
