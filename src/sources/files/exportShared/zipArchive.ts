import { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { ByteSource } from '../importSource.js';
import { ZIP_LIMITS, type ZipLimits } from './parserLimits.js';
import { messageOf, UnreadableExportError } from './unreadableExport.js';

/**
 * A zip archive read in place, entry by entry, through range reads of its ByteSource: nothing is
 * extracted and the archive is never held in memory. yauzl reads it: it is the long-maintained
 * reader that reads the central directory (not the local headers a streaming unzipper trusts),
 * handles zip64 and data descriptors (Java's ZipOutputStream, which Health Connect uses, writes
 * them), checks every entry's size against the directory, and takes any random-access source
 * through its RandomAccessReader, which is exactly a ByteSource.
 *
 * Hostile archives (issue 34, bounds in parserLimits.ts): before any entry is read, the entry count
 * and the bytes from the start of the central directory to the end of the file are bounded, so a
 * directory of millions of entries or of 64 KiB extra fields is refused from its end record; each
 * entry's name, extra field and comment are bounded as they are read, and the reader's record of
 * the entry is dropped at once (yauzl allocates them outside the JavaScript heap, where a worker's
 * heap cap does not reach; only a few numbers per entry are kept); the declared uncompressed total is bounded relative to the archive
 * and absolutely (a zip bomb declares what it inflates to, and yauzl refuses an entry that
 * inflates to more than it declared). Entry names are only ever compared, never used as paths.
 */

export type { ZipLimits } from './parserLimits.js';

/** The end records after the central directory: the end record with its longest comment, and zip64's record and locator. */
const END_RECORDS_MAX_BYTES = 22 + 0xffff + 56 + 20;

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

const GIB = 1024 ** 3;
const sizeText = (bytes: number) => (bytes >= GIB ? `${(bytes / GIB).toFixed(1)} GiB` : `${bytes} bytes`);

/** Why one central-directory record is refused, or null. */
function oversizedField(raw: yauzl.Entry, limits: ZipLimits): string | null {
  const fields: [string, number, number][] = [
    ['name', raw.fileNameLength, limits.maxNameBytes],
    ['extra field', raw.extraFieldLength, limits.maxExtraFieldBytes],
    ['comment', raw.fileCommentLength, limits.maxCommentBytes],
  ];
  for (const [what, length, max] of fields) if (length > max) return `an entry's ${what} takes ${length} bytes, more than the ${max} accepted`;
  return null;
}

/**
 * What opening an entry needs of its directory record, in columns by directory position: a kept
 * yauzl record costs about 600 bytes of heap (and its raw name, extra field and comment outside
 * it), these about 40, so 200,000 entries stay near 25 MiB with their names.
 */
class EntryTable {
  private readonly offsets: Float64Array;
  private readonly compressed: Float64Array;
  private readonly uncompressed: Float64Array;
  private readonly methods: Int32Array;
  private readonly flags: Int32Array;

  constructor(count: number) {
    this.offsets = new Float64Array(count);
    this.compressed = new Float64Array(count);
    this.uncompressed = new Float64Array(count);
    this.methods = new Int32Array(count).fill(-1);
    this.flags = new Int32Array(count);
  }

  keep(index: number, raw: yauzl.Entry): void {
    this.offsets[index] = raw.relativeOffsetOfLocalHeader;
    this.compressed[index] = raw.compressedSize;
    this.uncompressed[index] = raw.uncompressedSize;
    this.methods[index] = raw.compressionMethod;
    this.flags[index] = raw.generalPurposeBitFlag;
  }

  /** A yauzl record with what its openReadStream reads (method, flags, sizes, where the local header is). */
  entry(index: number): yauzl.Entry | null {
    if (!(index >= 0 && index < this.methods.length) || this.methods[index] === -1) return null;
    return Object.assign(new yauzl.Entry(), {
      relativeOffsetOfLocalHeader: this.offsets[index]!,
      compressedSize: this.compressed[index]!,
      uncompressedSize: this.uncompressed[index]!,
      compressionMethod: this.methods[index]!,
      generalPurposeBitFlag: this.flags[index]!,
    });
  }
}

/**
 * Opens the archive and reads its central directory; UnreadableExportError when it is not a
 * readable zip or exceeds a bound. `overrides` replaces some of ZIP_LIMITS (tests).
 */
export async function openZipArchive(source: ByteSource, what: string, overrides: Partial<ZipLimits> = {}): Promise<ZipArchive> {
  const limits: ZipLimits = { ...ZIP_LIMITS, ...overrides };
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
    // yauzl reads the directory from where the end record says it starts, up to the end records:
    // those bytes are all it can read, so bounding them bounds the directory before any of it is held.
    const directoryStart = (zip as unknown as { readEntryCursor: number }).readEntryCursor;
    if (directoryStart > source.size) throw new UnreadableExportError('archive', `damaged zip archive: its central directory would start at byte ${directoryStart}, past the end of the file`);
    const directoryBytes = source.size - directoryStart;
    if (directoryBytes > limits.maxCentralDirectoryBytes + END_RECORDS_MAX_BYTES) {
      throw new UnreadableExportError('archive', `the archive's central directory takes ${directoryBytes} bytes, more than the ${limits.maxCentralDirectoryBytes} accepted`);
    }
    const allowance = Math.min(limits.maxDeclaredBytes, Math.max(limits.minAllowance, source.size * limits.maxExpansion));
    const entries: ArchiveEntry[] = [];
    const table = new EntryTable(zip.entryCount);
    let declared = 0;
    let index = 0;
    try {
      for await (const raw of zip.eachEntry()) {
        const i = index++;
        const oversized = oversizedField(raw, limits);
        if (oversized) throw new UnreadableExportError('archive', `the archive is refused: ${oversized}`);
        if (raw.fileName.endsWith('/')) continue;
        declared += raw.uncompressedSize;
        if (declared > allowance) break;
        table.keep(i, raw);
        entries.push({ name: raw.fileName, index: i, uncompressedSize: raw.uncompressedSize, compressedSize: raw.compressedSize });
      }
    } catch (err) {
      if (err instanceof UnreadableExportError) throw err;
      throw new UnreadableExportError('archive', `damaged zip archive: its central directory cannot be read (${messageOf(err)})`);
    }
    if (declared > allowance) {
      const bound = allowance === limits.maxDeclaredBytes ? `more than the ${sizeText(limits.maxDeclaredBytes)} accepted from any archive` : `more than ${limits.maxExpansion} times its own size`;
      const atLeast = index < zip.entryCount ? 'at least ' : '';
      throw new UnreadableExportError('archive', `the archive declares ${atLeast}${declared} uncompressed bytes, ${bound}: refused as a likely zip bomb`);
    }
    return {
      entries,
      async open(entry: ArchiveEntry): Promise<Readable> {
        const raw = table.entry(entry.index);
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

/** The first `max` entry names, for a refusal that says what an archive holds instead: `a, b, …` or `nothing`. */
export function entriesListed(entries: readonly ArchiveEntry[], max = 8): string {
  const listed = entries.slice(0, max).map((e) => e.name).join(', ');
  return `${listed || 'nothing'}${entries.length > max ? ', …' : ''}`;
}

/** The last path segment of an entry name. */
export function baseName(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}
