import type { ParseContext, ParseItem } from '../../../../commands/ingestion/records.js';
import type { ByteSource, ImportDecoder } from '../importSource.js';
import { removeTemporaryFile, spillOwnerOf, spillToTemporaryFile, TooLargeError, type SpillOwner } from '../exportShared/temporaryFile.js';
import { messageOf, UnreadableExportError } from '../exportShared/unreadableExport.js';
import { openUntrustedDatabase } from '../exportShared/untrustedSqlite.js';
import { baseName, entriesListed, notAZip, openZipArchive, type ArchiveEntry } from '../exportShared/zipArchive.js';
import { readExportDatabase } from './exportDatabase.js';

/**
 * health-connect (contracts §13): the zip that Health Connect's "Export data" writes, holding one
 * entry, `health_connect_export.db`, a byte copy of the platform's own SQLite database. The
 * database cannot be read as a stream, so it is copied out of the zip into a private temporary
 * file (never into memory: it can be hundreds of MB), opened defensively (exportShared/
 * untrustedSqlite.ts) and removed when the decoding ends, however it ends. The mapping of its
 * tables: docs/formats/health-connect.md.
 */

export const HEALTH_CONNECT_SLUG = 'health-connect';
const WHAT = "the zip Health Connect's \"Export data\" writes (holding health_connect_export.db)";
const DATABASE_ENTRY = 'health_connect_export.db';

export type HealthConnectOptions = {
  /** Where the database is copied while it is read (a directory under DATA_DIR, emptied at start-up). */
  tempDir: string;
  /** The largest database accepted (default 16 GiB). */
  maxDatabaseBytes?: number;
};

const DEFAULT_MAX_DATABASE_BYTES = 16 * 1024 ** 3;

export function healthConnectSniff(head: Buffer): string | null {
  return notAZip(head, WHAT);
}

export function createHealthConnectDecoder(options: HealthConnectOptions): ImportDecoder {
  return {
    slug: HEALTH_CONNECT_SLUG,
    sniff: healthConnectSniff,
    decode: (source, ctx) => decodeHealthConnect(source, ctx, options),
  };
}

/** The database entry: `health_connect_export.db` (older builds: `healthconnect_export.db`), or the archive's only `.db`. */
export function databaseEntry(entries: readonly ArchiveEntry[]): ArchiveEntry {
  const dbs = entries.filter((e) => baseName(e.name).toLowerCase().endsWith('.db'));
  const named = dbs.find((e) => baseName(e.name) === DATABASE_ENTRY) ?? dbs.find((e) => baseName(e.name) === 'healthconnect_export.db');
  if (named) return named;
  if (dbs.length === 1) return dbs[0]!;
  if (dbs.length === 0) throw new UnreadableExportError('archive', `not a Health Connect export: the archive holds no ${DATABASE_ENTRY} (it holds ${entriesListed(entries, 10)})`);
  throw new UnreadableExportError('archive', `not a Health Connect export: the archive holds several databases and none is ${DATABASE_ENTRY} (${dbs.map((e) => e.name).join(', ')})`);
}

async function* decodeHealthConnect(source: ByteSource, ctx: ParseContext, options: HealthConnectOptions): AsyncGenerator<ParseItem> {
  const { path, entry } = await copyDatabase(source, options, spillOwnerOf(ctx));
  try {
    const db = openUntrustedDatabase(path, entry.name);
    try {
      yield* readExportDatabase(db, ctx);
    } finally {
      db.close();
    }
  } finally {
    await removeTemporaryFile(path);
  }
}

/**
 * Opens the export's database as the decoder does (its schema refused or its integrity checked,
 * exportShared/untrustedSqlite.ts) and reads nothing: the check of a request-time upload
 * (contracts §18), run in a process that can be killed (src/server/untrustedFileCheck.ts).
 * Throws UnreadableExportError with the reason.
 */
export async function checkHealthConnectExport(source: ByteSource, options: HealthConnectOptions): Promise<void> {
  const { path, entry } = await copyDatabase(source, options);
  try {
    openUntrustedDatabase(path, entry.name).close();
  } finally {
    await removeTemporaryFile(path);
  }
}

/** The database entry copied out of the zip into a private temporary file, named for its owner where known (start-up and erasure sweep it). */
async function copyDatabase(source: ByteSource, options: HealthConnectOptions, owner: SpillOwner = null): Promise<{ path: string; entry: ArchiveEntry }> {
  const maxBytes = options.maxDatabaseBytes ?? DEFAULT_MAX_DATABASE_BYTES;
  const archive = await openZipArchive(source, WHAT);
  try {
    const entry = databaseEntry(archive.entries);
    if (entry.uncompressedSize > maxBytes) throw new UnreadableExportError(entry.name, `${entry.name} is ${entry.uncompressedSize} bytes, more than the ${maxBytes} accepted`);
    try {
      return { path: await spillToTemporaryFile(await archive.open(entry), options.tempDir, '.db', maxBytes, owner), entry };
    } catch (err) {
      if (err instanceof UnreadableExportError) throw err;
      if (err instanceof TooLargeError) throw new UnreadableExportError(entry.name, `${entry.name} inflates to more than the ${maxBytes} bytes accepted`);
      // A full disk or a closed source is the service's trouble, not the upload's.
      if (isSystemError(err)) throw err;
      throw new UnreadableExportError(entry.name, `${entry.name} cannot be read from the archive: ${messageOf(err)}`);
    }
  } finally {
    archive.close();
  }
}

function isSystemError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code);
}
