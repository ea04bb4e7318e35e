import { forwarded, StoreThread } from '../shared/storeThread.js';
import { siblingModule } from '../shared/workerThreads.js';
import { LeaseLostError } from './leases.js';
import { CheckpointMismatchError, type AggregateQuery, type AggregateRow, type ReadStore } from './readStore.js';
import type { SqliteReadStore } from './sqliteReadStore.js';

/** Every call of the port but the ones a thread cannot serve (callbacks, synchronous answers, close). */
const CALLS = ['ensureCollections', 'dropCollections', 'get', 'find', 'count', 'aggregate', 'joinBytes', 'applyChanges', 'updateIf', 'applyBatch', 'getCheckpoint', 'listCheckpoints', 'setCheckpoint', 'purgeDeleted'] as const;
type Call = (typeof CALLS)[number];

// The forwarded calls are members of the class, with the port's own signatures.
export interface ThreadedSqliteReadStore extends Pick<Required<ReadStore>, Call> {}

/**
 * The embedded read store on a connection of its own, on a thread of its own, whose calls run
 * there one after another in the order they were made (storeThreadServer.ts `inOrder`): a read
 * sees every write asked for before it, answered or not. A rebuild's replay writes through one
 * (rebuild.ts): it asks for a chunk's write, goes on preparing the next chunk on its own thread
 * (the log read, evolve), and that chunk's reads queue behind the write on this connection.
 *
 * No leases (the thread's connection holds none) and no change stamp (nothing read through it
 * may be kept: the caller cannot tell when it changed).
 */
export class ThreadedSqliteReadStore implements ReadStore {
  readonly kind = 'sqlite' as const;

  private constructor(private readonly thread: StoreThread) {
    const calls = forwarded<Required<ReadStore>, Call>(thread, CALLS);
    Object.assign(this, calls);
    // Bytes come back from the thread as Uint8Array (structured cloning drops Buffer's class): read
    // as Buffers, as the store in-thread answers them. The store takes either when it writes.
    this.get = async (collection, id) => withBuffers(await calls.get(collection, id));
    this.find = async (collection, query) => {
      const docs = await calls.find(collection, query);
      for (const d of docs) withBuffers(d);
      return docs as never;
    };
    this.joinBytes = async (collection, query) => {
      const rows = await calls.joinBytes(collection, query);
      for (const r of rows) r.bytes = asBuffer(r.bytes);
      return rows;
    };
  }

  /** Starts the thread and opens its connection (the options of SqliteReadStore). */
  static async open(options: ConstructorParameters<typeof SqliteReadStore>[0]): Promise<ThreadedSqliteReadStore> {
    const thread = await StoreThread.start(siblingModule(import.meta.url, 'sqliteReadStoreThread'), options, { name: 'read store', errors: [CheckpointMismatchError, LeaseLostError] });
    return new ThreadedSqliteReadStore(thread);
  }

  /** The rows of `aggregate`, handed to `each` here (a callback cannot cross threads). */
  async aggregateEach(collection: string, query: AggregateQuery, each: (row: AggregateRow) => void): Promise<void> {
    for (const row of await this.aggregate(collection, query)) each(row);
  }

  changeStamp(): number | null {
    return null;
  }

  /** The calls already made are answered first; deferred writes are committed as the store closes. */
  close(): Promise<void> {
    return this.thread.close();
  }
}

const asBuffer = (v: Uint8Array): Buffer => (Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength));

/** The document with its top-level bytes as Buffers (bytes live only in declared, top-level fields). */
function withBuffers<T>(doc: T): T {
  if (doc === null || typeof doc !== 'object') return doc;
  const d = doc as Record<string, unknown>;
  for (const k in d) {
    const v = d[k];
    if (v instanceof Uint8Array) d[k] = asBuffer(v);
  }
  return doc;
}
