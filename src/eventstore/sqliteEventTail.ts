import type { AllFilter, RecordedEvent } from './eventStore.js';
import { decodeData, READ_BUDGET, toRecorded, type EventRow } from './sqliteEventRows.js';

/**
 * A live catch-up subscription that reached the tail of the log: from here on the shared tail
 * reader hands it the matching events after `cursor`, instead of it querying the log itself.
 */
export type TailMember = {
  /** Position of the last event this subscriber has been handed (or scanned past). */
  cursor: number;
  /** Set by the subscriber on unsubscribe: nothing is handed to it after that. */
  stopped: boolean;
  readonly matches: (row: Pick<EventRow, 'type' | 'stream'>) => boolean;
  readonly next: (event: RecordedEvent) => void;
  readonly complete: () => void;
  readonly error: (err: unknown) => void;
};

export type TailSource = {
  /** Rows of the log after `after`, in position order, at most `max`. */
  rowsAfter(after: number, max: number): IterableIterator<EventRow>;
  /** Position of the newest event (0 when empty). */
  head(): number;
};

/** Rows one read of the tail looks at before it yields to the event loop. */
const TAIL_BATCH = 500;

/**
 * One reader of the log's tail per connection (per thread), shared by every live subscription
 * of that connection. Before it, each of the ~25 subscribers of a service thread (projections,
 * reactors, the webhook engine) woke after every append and ran its own query; now one read after
 * an append looks at the new rows once, decodes each row only if some subscriber's filter wants
 * it, and hands every such subscriber its own parsed copy (a subscriber may change what it is
 * handed, so none is shared). What a subscriber sees is unchanged: every matching event after its
 * checkpoint, in log order, each once.
 *
 * Safety rests on the same property as before: positions are assigned inside the write
 * transaction, so commit order is position order and the rows after the reader's position are
 * exactly what was committed since. A subscriber joins only straight after a catch-up read that
 * reached the head of the log in the same synchronous step (`join`), so nothing between its own
 * read and the shared reader's position can be missed.
 */
export class SqliteEventTail {
  private readonly members = new Set<TailMember>();
  /** How far the shared reader has read the log; null while nobody is at the tail. */
  private position: number | null = null;
  private scheduled = false;
  private pollTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly source: TailSource,
    private readonly pollIntervalMs: number,
  ) {}

  /**
   * Adds a subscriber whose catch-up read has just returned every matching event up to the head
   * of the log (nothing more to read), in this same synchronous step. Events up to the shared
   * reader's position were then in that read, so the member starts at whichever is further on.
   */
  join(member: TailMember): void {
    if (this.position === null) this.position = Math.max(this.source.head(), 0);
    member.cursor = Math.max(member.cursor, this.position);
    this.members.add(member);
    // Appends by other processes (the CLI) wake nobody here: look for them now and then.
    this.pollTimer ??= setInterval(() => this.wake(), this.pollIntervalMs);
  }

  leave(member: TailMember): void {
    member.stopped = true;
    this.members.delete(member);
    if (this.members.size === 0) this.idle();
  }

  /** Something was appended (here, by another thread, or maybe by another process). */
  wake(): void {
    if (this.scheduled || this.members.size === 0) return;
    this.scheduled = true;
    // Deferred: subscribers must not run inside the appender's call.
    setImmediate(() => {
      this.scheduled = false;
      this.read();
    });
  }

  /** Ends every member's subscription (the store closes). */
  close(): void {
    const members = [...this.members];
    this.members.clear();
    this.idle();
    for (const m of members) if (!m.stopped) m.complete();
  }

  private idle(): void {
    this.position = null;
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = null;
  }

  private read(): void {
    if (this.position === null || this.members.size === 0) return;
    const members = [...this.members];
    let batch: ReturnType<SqliteEventTail['collect']>;
    try {
      batch = this.collect(this.position, members);
    } catch (err) {
      this.members.clear();
      this.idle();
      for (const m of members) if (!m.stopped) m.error(err);
      return;
    }
    // Moved before handing anything over: a subscription that starts inside a `next` reads the
    // log itself up to the head and joins at least here, so it is not handed these rows again.
    this.position = batch.scannedTo;
    for (const { row, json, wanted } of batch.rows) {
      for (const m of wanted) {
        if (m.stopped || row.position <= m.cursor) continue;
        m.cursor = row.position;
        m.next(toRecorded(row, json));
      }
    }
    for (const m of members) if (!m.stopped) m.cursor = Math.max(m.cursor, batch.scannedTo);
    if (batch.more) this.wake();
  }

  /**
   * Reads the rows after `after` (at most TAIL_BATCH, fewer once the decoded data passes
   * READ_BUDGET) and decodes those some member wants. The statement is run to its end before
   * anything is handed over: a subscriber may use the same connection from inside `next`.
   */
  private collect(after: number, members: readonly TailMember[]) {
    const rows: { row: EventRow; json: string; wanted: TailMember[] }[] = [];
    let scannedTo = after;
    let count = 0;
    let budget = READ_BUDGET;
    const it = this.source.rowsAfter(after, TAIL_BATCH);
    for (const row of it) {
      count += 1;
      scannedTo = row.position;
      const wanted = members.filter((m) => row.position > m.cursor && m.matches(row));
      if (wanted.length === 0) continue;
      const json = decodeData(row.data);
      rows.push({ row, json, wanted });
      budget -= json.length;
      if (budget <= 0 && count < TAIL_BATCH) {
        it.return?.();
        return { rows, scannedTo, more: true };
      }
    }
    return { rows, scannedTo, more: count === TAIL_BATCH };
  }
}

/** The filter of a subscription as a test of one row, the same test the filtered SQL read makes. */
export function rowFilter(filter: AllFilter | undefined): (row: Pick<EventRow, 'type' | 'stream'>) => boolean {
  const types = filter?.eventTypes?.length ? new Set(filter.eventTypes) : null;
  const prefixes = filter?.streamPrefixes?.length ? [...filter.streamPrefixes] : null;
  return (row) => (!types || types.has(row.type)) && (!prefixes || prefixes.some((p) => row.stream.startsWith(p)));
}
