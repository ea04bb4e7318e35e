import type { Observable } from 'rxjs';
import { forwarded, StoreThread } from '../shared/storeThread.js';
import { siblingModule } from '../shared/workerThreads.js';
import { ConcurrencyError, EventTooLargeError, IdempotencyConflictError, StreamDeletedError, type EventStore, type ReadAllOptions, type ReadStreamOptions, type RecordedEvent, type SubscribeOptions } from './eventStore.js';
import { SqliteEventStore, type SqliteEventStoreOptions } from './sqliteEventStore.js';

/** The writes the writer thread does: a write added to the store is forwarded by adding its name here. */
const WRITES = ['appendToStream', 'appendToStreams', 'deleteStream', 'purgeDeleted'] as const;
type Write = (typeof WRITES)[number];

/** The classes callers tell a refused write by (`instanceof`, `code`). */
const WRITE_ERRORS = [ConcurrencyError, StreamDeletedError, IdempotencyConflictError, EventTooLargeError];

// The forwarded writes are members of the class, with the store's own signatures.
export interface ThreadedSqliteEventStore extends Pick<Required<SqliteEventStore>, Write> {}

/**
 * The embedded event store with its writes on a thread of their own (issue 37): appends and
 * deletions go to a writer thread's connection, whose group commit gathers the writes asked for
 * together into one transaction and one fsync, and each is answered once its group is durable,
 * as in-thread. Reads, the shared tail and the subscriptions stay on this thread's own connection
 * (WAL: they never wait on the writer); an answered write wakes the tail here at once, and the
 * writer's store tells the other threads, as any connection does.
 *
 * Every rule of the single file holds as it is: the writer is one more connection (the CLI's
 * process writes through its own, each write an IMMEDIATE transaction retried while busy).
 */
export class ThreadedSqliteEventStore implements EventStore {
  readonly kind = 'sqlite' as const;

  private constructor(
    private readonly local: SqliteEventStore,
    private readonly writer: StoreThread,
  ) {
    const writes = forwarded<SqliteEventStore, Write>(writer, WRITES);
    for (const write of WRITES) {
      this[write] = async (...args: never[]) => {
        const answer = await (writes[write] as (...a: never[]) => Promise<never>)(...args);
        this.local.noticeAppends();
        return answer;
      };
    }
  }

  static async open(options: SqliteEventStoreOptions): Promise<ThreadedSqliteEventStore> {
    // This connection first: it creates the file's tables before the writer opens it too.
    const local = new SqliteEventStore(options);
    try {
      const writer = await StoreThread.start(siblingModule(import.meta.url, 'sqliteEventStoreThread'), options, { name: 'event store writer', errors: WRITE_ERRORS });
      return new ThreadedSqliteEventStore(local, writer);
    } catch (err) {
      await local.close();
      throw err;
    }
  }

  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.local.readStream(streamName, options);
  }

  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.local.readAll(options);
  }

  subscribeToAll(options?: SubscribeOptions): Observable<RecordedEvent> {
    return this.local.subscribeToAll(options);
  }

  headPosition(): Promise<number> {
    return this.local.headPosition();
  }

  /** Writes already asked for are answered first. */
  async close(): Promise<void> {
    await this.writer.close();
    await this.local.close();
  }
}
