import type { RecordedEvent } from '../eventstore/eventStore.js';
import type { CollectionSpec, Doc, PositionedChange, ReadStore } from '../readstore/readStore.js';

/**
 * Events a projection could not apply (issue 20): a batch that failed `attempts` times is narrowed
 * to the event that fails on its own, which is recorded here with its position, the projection and
 * the error, and skipped; the projection carries on after it. An operator lists them and replays
 * one once the code is fixed (`npm run cli -- projections dead-letters`, `replay-dead-letter <id>`;
 * docs/architecture.md "Dead letters"). They live beside the read models in a collection of the
 * runtime's that no projection owns: a rebuild keeps them.
 *
 * Only failures of the event's own code lead here (contracts §19): a store failing for a while is
 * retried until it answers, and an erasure event (user.erased, provider_data.erased) is never
 * dead-lettered; the projection stops on it instead (runner.ts, projectionStalls.ts).
 */
export const DEAD_LETTERS = 'projection_dead_letters';

export const deadLettersCollection: CollectionSpec = {
  name: DEAD_LETTERS,
  indexes: [{ fields: [['status', 1], ['projection', 1], ['position', 1]] }],
  columns: ['event_type', 'dead_lettered_at'],
  // Not rebuildable from events: a later shape that only adds columns or indexes keeps the rows.
  extendInPlace: true,
};

/**
 * `open` until the event is applied: by `replay-dead-letter` (`replayed`), or by a rebuild that
 * applied it in its place in the log (`applied_by_rebuild`); `gone` when its event is no longer in
 * the log (its user's data was erased), so there is nothing left to apply.
 */
export type DeadLetterStatus = 'open' | 'replayed' | 'applied_by_rebuild' | 'gone';

export type DeadLetterDoc = Doc & {
  projection: string;
  /** Global position of the event in the log. */
  position: number;
  event_id: string;
  event_type: string;
  stream: string;
  /** The error's name and message (no stack, at most 500 characters), from the last attempt. */
  error: string;
  attempts: number;
  status: DeadLetterStatus;
  dead_lettered_at: string;
  resolved_at: string | null;
};

/** The operator's handle for a dead letter: `<projection>@<position>`. */
export const deadLetterId = (projection: string, position: number): string => `${projection}@${position}`;

const MAX_ERROR_CHARS = 500;

/** What an error says, bounded: thrown messages may quote data, so only the first line of it and no stack. */
export function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const line = text.split('\n', 1)[0]!;
  return line.length > MAX_ERROR_CHARS ? `${line.slice(0, MAX_ERROR_CHARS - 1)}…` : line;
}

/** The change that records `event` as dead-lettered by `projection`, in the batch that moves the checkpoint past it. */
export function deadLetterChange(projection: string, event: RecordedEvent, err: unknown, attempts: number, at: Date): PositionedChange {
  const doc: DeadLetterDoc = {
    _id: deadLetterId(projection, event.globalPosition),
    projection,
    position: event.globalPosition,
    event_id: event.id,
    event_type: event.type,
    stream: event.streamName,
    error: errorText(err),
    attempts,
    status: 'open',
    dead_lettered_at: at.toISOString(),
    resolved_at: null,
  };
  return { op: 'put', collection: DEAD_LETTERS, doc, position: event.globalPosition, index: 0 };
}

/**
 * The change that closes a dead letter, in the batch that applies its event: the whole document
 * again (a put, which the MongoDB store applies whatever the rebuild epoch that wrote it).
 */
export function resolvedChange(letter: DeadLetterDoc, status: Exclude<DeadLetterStatus, 'open'>, at: Date, position: number): PositionedChange {
  return { op: 'put', collection: DEAD_LETTERS, doc: { ...letter, status, resolved_at: at.toISOString() }, position, index: 0 };
}

/** Dead letters, oldest position first per projection: the open ones, or all of them; at most `limit`. */
export async function listDeadLetters(readStore: ReadStore, options: { all?: boolean; limit?: number } = {}): Promise<DeadLetterDoc[]> {
  return readStore.find<DeadLetterDoc>(DEAD_LETTERS, {
    filter: options.all ? {} : { status: 'open' },
    sort: [['status', 1], ['projection', 1], ['position', 1]],
    limit: options.limit ?? 1000,
  });
}

/**
 * Erasure (contracts §19): removes every dead letter whose stream or error names `needle` (a
 * user's id: every stream of a user's data carries it), whatever its status; its event is erased
 * from the log, so there is nothing left to replay. Read in pages by `_id`.
 */
export async function eraseDeadLettersNaming(readStore: ReadStore, needle: string, signal?: AbortSignal): Promise<number> {
  let erased = 0;
  let after = '';
  // Dead letters are few (each one is an operator's case); the walk ends with the collection.
  for (;;) {
    signal?.throwIfAborted();
    const page = await readStore.find<DeadLetterDoc>(DEAD_LETTERS, { filter: { _id: { $gt: after } }, sort: [['_id', 1]], limit: 500 });
    const doomed = page.filter((d) => d.stream.includes(needle) || d.error.includes(needle));
    if (doomed.length > 0) await readStore.applyChanges(doomed.map((d) => ({ op: 'delete' as const, collection: DEAD_LETTERS, id: d._id })), { erasing: true });
    erased += doomed.length;
    if (page.length < 500) return erased;
    after = page[page.length - 1]!._id;
  }
}
