import type { Readable } from 'node:stream';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import type { ByteSource } from '../importSource.js';

/**
 * The Health app's export.zip, read in place through range reads of the upload (yauzl over a
 * RandomAccessReader): the central directory first, then any entry on demand, never extracted.
 * yauzl because it follows the zip specification (central directory, not a scan for local
 * headers), supports ZIP64 (exports pass 4 GiB), checks entry sizes and CRCs, never buffers an
 * entry whole, and is maintained.
 */

/** Entries remembered per kind; an archive with more is read up to this many (a bound a stranger cannot move). */
const MAX_ENTRIES_KEPT = 200_000;
/** Central-directory reads are small and sequential: served from one window read ahead. */
const WINDOW_BYTES = 64 * 1024;

class ByteSourceReader extends yauzl.RandomAccessReader {
  private window: Buffer = Buffer.alloc(0);
  private windowStart = 0;

  constructor(private readonly source: ByteSource) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    return this.source.read(start, end);
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null) => void): void {
    const w = this.window;
    if (position >= this.windowStart && position + length <= this.windowStart + w.length) {
      w.copy(buffer, offset, position - this.windowStart, position - this.windowStart + length);
      setImmediate(callback, null);
      return;
    }
    const end = Math.min(this.source.size, position + Math.max(length, WINDOW_BYTES));
    const parts: Buffer[] = [];
    const stream = this.source.read(position, end);
    stream.on('data', (c: Buffer) => parts.push(c));
    stream.on('error', (err: Error) => callback(err));
    stream.on('end', () => {
      const got = Buffer.concat(parts);
      if (got.length < length) return callback(new Error(`short read at ${position}: ${got.length} of ${length} bytes`));
      this.window = got;
      this.windowStart = position;
      got.copy(buffer, offset, 0, length);
      callback(null);
    });
  }
}

export type ZipContents = {
  /** The export document: `export.xml` (any folder), else the largest other `.xml` that is not a CDA file or a route. */
  exportXml: Entry | null;
  /** Route files by their path below the export folder, e.g. `workout-routes/route_2024-01-01_8.00am.gpx`. */
  routes: Map<string, Entry>;
  /** `electrocardiograms/*.csv`, in name order. */
  ecgs: Entry[];
  /** Entries beyond MAX_ENTRIES_KEPT that were not looked at. */
  entriesSkipped: number;
};

export class ZipArchive {
  private constructor(
    private readonly zip: ZipFile,
    readonly contents: ZipContents,
  ) {}

  static async open(source: ByteSource): Promise<ZipArchive> {
    const zip = await yauzl.fromRandomAccessReaderPromise(new ByteSourceReader(source), source.size, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: true,
      validateEntrySizes: true,
      strictFileNames: false,
    });
    const xmls: Entry[] = [];
    const routes = new Map<string, Entry>();
    const ecgs: Entry[] = [];
    let seen = 0;
    let entriesSkipped = 0;
    for await (const entry of zip.eachEntry()) {
      if (++seen > MAX_ENTRIES_KEPT) {
        entriesSkipped++;
        continue;
      }
      const name = entry.fileName;
      if (name.endsWith('/')) continue;
      const lower = name.toLowerCase();
      const base = lower.slice(lower.lastIndexOf('/') + 1);
      if (lower.endsWith('.gpx') && lower.includes('workout-routes/')) routes.set(afterExportFolder(name), entry);
      else if (lower.endsWith('.csv') && lower.includes('electrocardiograms/')) ecgs.push(entry);
      else if (base.endsWith('.xml') && !base.endsWith('_cda.xml') && !lower.includes('workout-routes/')) xmls.push(entry);
    }
    ecgs.sort((a, b) => (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0));
    const named = xmls.find((e) => e.fileName.toLowerCase().split('/').pop() === 'export.xml');
    // Older iOS versions localised the document's name (e.g. "Exportieren.xml").
    const exportXml = named ?? xmls.sort((a, b) => b.uncompressedSize - a.uncompressedSize || (a.fileName < b.fileName ? -1 : 1))[0] ?? null;
    return new ZipArchive(zip, { exportXml, routes, ecgs, entriesSkipped });
  }

  /** The entry's bytes, decompressed as they are read (size and CRC checked by yauzl at the end). */
  openEntry(entry: Entry): Promise<Readable> {
    return this.zip.openReadStreamPromise(entry);
  }

  close(): void {
    this.zip.close();
  }
}

/** A path below the export folder: `apple_health_export/workout-routes/x.gpx` → `workout-routes/x.gpx`. */
function afterExportFolder(name: string): string {
  const i = name.toLowerCase().lastIndexOf('workout-routes/');
  return name.slice(i);
}

/** The key a `FileReference path="/workout-routes/…"` names in ZipContents.routes. */
export function routeKeyOf(path: string): string {
  const i = path.toLowerCase().lastIndexOf('workout-routes/');
  return i === -1 ? path.replace(/^\/+/, '') : path.slice(i);
}
