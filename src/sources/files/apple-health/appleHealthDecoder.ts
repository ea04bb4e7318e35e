import { tmpdir } from 'node:os';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createGunzip, gunzipSync } from 'node:zlib';
import type { ParseContext, ParseItem } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { healthKitObjectItems, wholeUploadRecords } from '../device-a/healthKitParser.js';
import { Upload } from '../device-a/upload.js';
import type { ByteSource, ImportDecoder } from '../importSource.js';
import { activitySummaryRecord } from './activitySummary.js';
import { ecgObject, readCsvText } from './ecgCsv.js';
import { type Obj, excerptOfElement, rejectedAt } from './exportFields.js';
import { correlationObject, recordObjects } from './exportRecords.js';
import { type RouteNotes, inlineRouteOf, routeFilesOf, workoutObject } from './exportWorkouts.js';
import { type XmlElement, readTopLevelElements } from './exportXmlReader.js';
import { type RoutePointLine, readGpx } from './gpxRoute.js';
import { bodyKind, isZip, sniffAppleHealth } from './sniff.js';
import { vendorOfExportRecord } from './vendor.js';
import { fileByteSource, readHead } from '../exportShared/byteSources.js';
import { UnreadableExportError } from '../exportShared/unreadableExport.js';
import { APPLE_FILE_LIMITS } from '../exportShared/parserLimits.js';
import { removeTemporaryFile, spillOwnerOf, spillToTemporaryFile, TooLargeError, type SpillOwner } from '../exportShared/temporaryFile.js';
import { entriesListed, openZipArchive, type ArchiveEntry, type ZipArchive } from '../exportShared/zipArchive.js';
import { type ExportContents, exportContentsOf, routeKeyOf } from './exportContents.js';

/**
 * `apple-health` (contracts §13): the Health app's export.zip, or the export.xml in it, either
 * optionally gzip-compressed. Streams at bounded memory: the zip is read in place entry by entry,
 * export.xml element by element, each route file when its workout closes. Items come in a fixed
 * order (export.xml's elements in document order, then the ECG files by name, then the sleep
 * sessions and menstrual cycles device-a derives from the whole upload), so the same bytes give the
 * same sequence. Mapping: docs/formats/apple-health.md.
 */

export type AppleHealthOptions = {
  /** Where a gzip-compressed zip is decompressed to be read by range (default: the OS temp dir; the service gives DATA_DIR/import-tmp). */
  tempDir?: string;
};

/** Route points kept per workout (parserLimits.ts). */
export const MAX_ROUTE_POINTS = APPLE_FILE_LIMITS.maxRoutePoints;

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Records of one device-a line object, or the reason it is rejected at `location`. */
function itemsOf(up: Upload, build: () => Obj | Obj[], location: string, el: XmlElement | null): ParseItem[] {
  let objects: Obj | Obj[];
  try {
    objects = build();
  } catch (err) {
    if (err instanceof RecordError) return [rejectedAt(location, err.message, el ? excerptOfElement(el) : '')];
    throw err;
  }
  const out: ParseItem[] = [];
  for (const o of Array.isArray(objects) ? objects : [objects]) {
    try {
      const items = healthKitObjectItems(up, o);
      if (Array.isArray(items)) out.push(...items);
      else out.push(items);
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      out.push(rejectedAt(location, err.message, el ? excerptOfElement(el) : ''));
    }
  }
  return out;
}

type OpenExport = { zip: ZipArchive; contents: ExportContents };

async function routeOf(el: XmlElement, zip: OpenExport | null): Promise<{ route: RoutePointLine[]; notes: RouteNotes }> {
  const route = inlineRouteOf(el).slice(0, MAX_ROUTE_POINTS);
  const notes: RouteNotes = { missing: [], damaged: [], truncated: false };
  // Route files are named by the minute they start: two routes of one minute name the same file.
  const files = [...new Set(routeFilesOf(el))];
  for (const path of files) {
    const entry = zip?.contents.routes.get(routeKeyOf(path));
    if (!entry) {
      notes.missing.push(path);
      continue;
    }
    if (route.length >= MAX_ROUTE_POINTS) {
      notes.truncated = true;
      continue;
    }
    try {
      const gpx = await readGpx(await zip!.zip.open(entry), MAX_ROUTE_POINTS - route.length);
      for (const p of gpx.points) route.push(p);
      if (gpx.error !== null) notes.damaged.push(path);
      if (gpx.truncated) notes.truncated = true;
    } catch {
      notes.damaged.push(path);
    }
  }
  // One route per workout part: the parts' files together, in time order.
  if (files.length > 1) route.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
  return { route, notes };
}

/**
 * contracts §17: a document of which not one element can be read is unreadable (the upload ends
 * `failed` with the reason), never `done` with nothing stored. Problems met before the first
 * element are therefore held (at most the reader's bound of loose errors) until an element shows
 * the document can be read; only then are they rejections beside its records.
 */
async function* decodeExportXml(bytes: Readable, file: string, up: Upload, zip: OpenExport | null): AsyncGenerator<ParseItem> {
  let lastLine = 0;
  let sawElement = false;
  const early: ParseItem[] = [];
  const unreadable = (reason: string) => new UnreadableExportError(file, `not a readable Apple Health export: ${reason}`);
  try {
    for await (const item of readTopLevelElements(bytes)) {
      if ('problem' in item) {
        const rejected = rejectedAt(`${file}:${item.problem.line}`, item.problem.reason, '');
        if (sawElement) yield rejected;
        else early.push(rejected);
        continue;
      }
      const el = item.element;
      if (!sawElement) {
        sawElement = true;
        yield* early;
      }
      lastLine = el.line;
      const at = `${file}:${el.line}`;
      switch (el.name) {
        case 'Record':
          yield* itemsOf(up, () => recordObjects(el), at, el);
          break;
        case 'Correlation':
          yield* itemsOf(up, () => correlationObject(el), at, el);
          break;
        case 'Workout': {
          const { route, notes } = await routeOf(el, zip);
          yield* itemsOf(up, () => workoutObject(el, route, notes), at, el);
          break;
        }
        case 'ActivitySummary':
          try {
            yield { record: activitySummaryRecord(el, up) };
          } catch (err) {
            if (!(err instanceof RecordError)) throw err;
            yield rejectedAt(at, err.message, excerptOfElement(el));
          }
          break;
        default:
        // ExportDate, Me (characteristics: never read), ClinicalRecord, Audiogram, VisionPrescription: not records here.
      }
    }
  } catch (err) {
    if (!sawElement) throw unreadable(`the document could not be read: ${errorMessage(err)}`);
    // The bytes broke off (a cut gzip stream, a zip entry failing its size or CRC check): what came before stays.
    yield rejectedAt(`${file}:${lastLine}`, `the document could not be read on after this line: ${errorMessage(err)}`, '');
  } finally {
    bytes.destroy();
  }
  if (!sawElement && early.length > 0) {
    const first = early[0] as { rejected: { reason: string } };
    throw unreadable(`no element of it could be read (${first.rejected.reason})`);
  }
}

/** The first bytes of an entry, enough to judge what it is; a read that fails makes the export unreadable. */
async function entryHead(zip: ZipArchive, entry: ArchiveEntry): Promise<Buffer> {
  const stream = await zip.open(entry);
  const chunks: Buffer[] = [];
  let n = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      n += chunk.length;
      if (n >= 64 * 1024) break;
    }
  } catch (err) {
    throw new UnreadableExportError(entry.name, `not a readable Apple Health export: ${entry.name} cannot be read: ${errorMessage(err)}`);
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks);
}

/** An archive the shared reader refuses (not a zip, over a bound of parserLimits.ts) fails the upload with its reason. */
async function* decodeZip(source: ByteSource, up: Upload): AsyncGenerator<ParseItem> {
  const zip = await openZipArchive(source, "the Health app's export.zip");
  try {
    const contents = exportContentsOf(zip.entries);
    const { exportXml, ecgs } = contents;
    if (exportXml) {
      // The fallback takes another .xml for a localised export.xml: it must open as <HealthData>.
      const problem = sniffAppleHealth(await entryHead(zip, exportXml));
      if (problem !== null) throw new UnreadableExportError(exportXml.name, problem);
      yield* decodeExportXml(await zip.open(exportXml), exportXml.name, up, { zip, contents });
    } else if (ecgs.length === 0) {
      throw new UnreadableExportError('archive', `not an Apple Health export: the archive holds no export.xml; it holds ${entriesListed(zip.entries)}`);
    } else yield rejectedAt('export.zip', 'the archive holds no export.xml', '');
    for (const entry of ecgs) {
      let text: string;
      try {
        text = await readCsvText(await zip.open(entry));
      } catch (err) {
        yield rejectedAt(entry.name, `the file could not be read: ${errorMessage(err)}`, '');
        continue;
      }
      yield* itemsOf(up, () => ecgObject(text, entry.name), entry.name, null);
    }
  } finally {
    zip.close();
  }
}

/**
 * A gzip-compressed zip cannot be read by range: it is decompressed to a temporary file first, at
 * most `cap` bytes, named for the upload's owner so that a crash leaves nothing erasure and
 * start-up do not find (exportShared/temporaryFile.ts).
 */
async function* decodeGzippedZip(source: ByteSource, up: Upload, owner: SpillOwner, options: AppleHealthOptions): AsyncGenerator<ParseItem> {
  // A zip barely compresses: a gzip holding far more than its own size is a bomb, not an export.
  const cap = Math.max(4 * source.size, 64 * 1024 * 1024);
  const input = source.read(0, source.size);
  const gunzip = createGunzip();
  input.on('error', (err) => gunzip.destroy(err));
  input.pipe(gunzip);
  let path: string;
  try {
    path = await spillToTemporaryFile(gunzip, options.tempDir ?? tmpdir(), '-export.zip', cap, owner);
  } catch (err) {
    input.destroy();
    const reason = err instanceof TooLargeError ? `decompresses to more than ${cap} bytes` : errorMessage(err);
    // Nothing of a zip can be read without its end (the central directory): the upload is unreadable.
    throw new UnreadableExportError('export.zip', `the gzip stream could not be read whole: ${reason}`);
  }
  try {
    yield* decodeZip(fileByteSource(path), up);
  } finally {
    await removeTemporaryFile(path);
  }
}

async function* decodeAppleHealth(source: ByteSource, ctx: ParseContext, options: AppleHealthOptions): AsyncGenerator<ParseItem> {
  const up = new Upload(ctx.provider, vendorOfExportRecord);
  const head = await readHead(source, 64 * 1024);
  const problem = sniffAppleHealth(head);
  if (problem !== null) throw new UnreadableExportError('upload', problem);
  const kind = bodyKind(head);
  if (kind === 'zip') yield* decodeZip(source, up);
  else if (kind === 'xml') yield* decodeExportXml(source.read(0, source.size), 'export.xml', up, null);
  else if (isZip(gunzipSync(head, { finishFlush: constants.Z_SYNC_FLUSH }))) yield* decodeGzippedZip(source, up, spillOwnerOf(ctx), options);
  else {
    const gunzip = createGunzip();
    // pipeline passes a failing read on to the gunzip stream, where the document reader meets it.
    pipeline(source.read(0, source.size), gunzip).catch(() => {});
    yield* decodeExportXml(gunzip, 'export.xml', up, null);
  }
  for (const record of wholeUploadRecords(up)) yield { record };
}

export function appleHealthDecoder(options: AppleHealthOptions = {}): ImportDecoder {
  return {
    slug: 'apple-health',
    sniff: sniffAppleHealth,
    decode: (source, ctx) => decodeAppleHealth(source, ctx, options),
  };
}

export const appleHealthImport: ImportDecoder = appleHealthDecoder();
