import { join } from 'node:path';
import type { Config } from '../config.js';
import type { EventStore } from '../eventstore/eventStore.js';
import type { ReadStore } from '../readstore/readStore.js';
import type { RawStore } from '../rawstore/rawStore.js';
import { ensureDataDir } from './dataDir.js';

/** Opens the configured backends: SQLite files under DATA_DIR, or KurrentDB + MongoDB. */
export type OpenOptions = {
  /**
   * Page cache of the embedded read store's connection, MiB (default 16): the projector thread's
   * is `PROJECTOR_CACHE_MIB`, the CLI's rebuild takes a larger one (docs/memory.md).
   */
  readCacheMiB?: number;
  /**
   * The service's own stores: the embedded event store's writes go to a thread of their own, so
   * the HTTP thread never waits on an fsync (issue 37; threadedSqliteEventStore.ts). Short CLI
   * commands and threads that are themselves off the HTTP thread write in-thread.
   */
  writerThread?: boolean;
  /**
   * The read store's connection on the service's HTTP thread (docs/store-threads.md "The HTTP
   * thread's read-store connection"): its savepoints' journals stay in memory (`temp_store =
   * MEMORY`), since during a burst of small uploads the writes that change more than 64 KiB of
   * pages spilled them to temporary files, ~65 KiB per one-line upload; and its commits are spaced
   * (SqliteGroupCommit `spacingMs`), since there the in-thread projections, the reactors'
   * checkpoints and the webhook engine's writes arrive a turn or two apart and each commit rewrites
   * every page it touched.
   */
  httpThreadReadStore?: boolean;
};

/** SqliteGroupCommit's spacing of the HTTP thread's read-store commits (OpenOptions.httpThreadReadStore). */
export const READ_COMMIT_SPACING_MS = 4;

export async function openStores(config: Config, options: OpenOptions = {}): Promise<{ eventStore: EventStore; readStore: ReadStore; rawStore: RawStore }> {
  if (config.backend.kind === 'production') {
    const { KurrentDBEventStore } = await import('../eventstore/kurrentDBEventStore.js');
    const { MongoReadStore } = await import('../readstore/mongoReadStore.js');
    // Fails at start-up, saying which right is missing, when the user may not read $all.
    const eventStore = await KurrentDBEventStore.connect({ connectionString: config.backend.eventstoreUrl });
    const { GridFsRawStore } = await import('../rawstore/gridFsRawStore.js');
    // Both share one MongoClient (src/readstore/mongoConnection.ts).
    const readStore = await MongoReadStore.connect({ url: config.backend.mongodbUrl, database: config.backend.mongodbDatabase });
    const rawStore = await GridFsRawStore.connect(config.backend.mongodbUrl, config.backend.mongodbDatabase);
    return { eventStore, readStore, rawStore };
  }
  ensureDataDir(config.dataDir);
  const { SqliteEventStore } = await import('../eventstore/sqliteEventStore.js');
  const { ThreadedSqliteEventStore } = await import('../eventstore/threadedSqliteEventStore.js');
  const eventsPath = join(config.dataDir, 'events.sqlite');
  const { SqliteReadStore } = await import('../readstore/sqliteReadStore.js');
  const { FileRawStore } = await import('../rawstore/fileRawStore.js');
  return {
    rawStore: new FileRawStore(join(config.dataDir, 'raw')),
    // The writer thread's groups spilled their savepoints' journals to temporary files (docs/store-threads.md).
    eventStore: options.writerThread ? await ThreadedSqliteEventStore.open({ path: eventsPath, tempInMemory: true }) : new SqliteEventStore({ path: eventsPath }),
    readStore: new SqliteReadStore({ path: join(config.dataDir, 'readmodels.sqlite'), cacheMiB: options.readCacheMiB, ...(options.httpThreadReadStore ? { commitSpacingMs: READ_COMMIT_SPACING_MS, tempInMemory: true } : {}) }),
  };
}

/**
 * What a rebuild's replays write through (ProjectorRuntime.rebuild `replayStore`): on the embedded
 * store, a connection of their own on a thread of its own, whose calls run in order
 * (threadedSqliteReadStore.ts), so the replay prepares a chunk on the calling thread while the
 * last one is written (docs/rebuild.md). On MongoDB none: a replay writes each chunk and waits.
 */
export function replayStoreOf(config: Config, options: { readCacheMiB?: number } = {}): (() => Promise<ReadStore>) | undefined {
  if (config.backend.kind === 'production') return undefined;
  return async () => {
    const { ThreadedSqliteReadStore } = await import('../readstore/threadedSqliteReadStore.js');
    return ThreadedSqliteReadStore.open({ path: join(config.dataDir, 'readmodels.sqlite'), cacheMiB: options.readCacheMiB });
  };
}
