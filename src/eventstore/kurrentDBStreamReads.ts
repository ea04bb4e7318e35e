import {
  BACKWARDS,
  END,
  ErrorType,
  FORWARDS,
  START,
  type Direction,
  type KurrentDBClient,
  type ReadRevision,
  type RecordedEvent as KurrentRecordedEvent,
} from '@kurrent/kurrentdb-client';
import { IdempotencyConflictError, StreamDeletedError, type AppendResult, type ExpectedRevision } from './eventStore.js';
import { errorType, translateAccessError } from './kurrentDBErrors.js';
import { matchReplay } from './kurrentDBRecords.js';

/** Events looked at, beyond the batch itself, when an `any`/`stream_exists` append may be a re-send. */
const REPLAY_TAIL = 64;

export type ReadRawOptions = { direction: Direction; fromRevision: ReadRevision; maxCount?: number };

/**
 * Reads of one stream as KurrentDB records, for the adapter's own needs: the events themselves,
 * a stream's last revision, whether it is tombstoned, and whether an append re-sends events the
 * stream already holds.
 */
export class KurrentDBStreamReads {
  constructor(private readonly client: Pick<KurrentDBClient, 'readStream'>) {}

  /**
   * Best-effort detection of a re-sent append, so that callers learn `replayed: true`. KurrentDB
   * would itself accept the re-send idempotently, but without saying so, and (with `any`) only
   * while the ids are in its in-memory cache. The ids are looked for where a replay would sit:
   * right after the expected revision when there is one, else among the last events of the stream.
   *
   * KurrentDB's idempotency is per stream: an id already stored in ANOTHER stream is not detected
   * (there is no index by event id), unlike the SQLite adapter which refuses it.
   */
  async findReplay(streamName: string, ids: readonly (string | undefined)[], expected: ExpectedRevision): Promise<AppendResult | null> {
    const k = ids.length;
    let window: KurrentRecordedEvent[];
    let mayHaveEarlier = false;
    if (typeof expected === 'number') {
      window = await this.read(streamName, { direction: FORWARDS, fromRevision: BigInt(expected + 1), maxCount: k });
    } else if (expected === 'no_stream') {
      window = await this.read(streamName, { direction: FORWARDS, fromRevision: START, maxCount: k });
    } else {
      window = (await this.read(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: k + REPLAY_TAIL })).reverse();
      mayHaveEarlier = window.length === k + REPLAY_TAIL;
    }
    let verdict = matchReplay(window, ids);
    // The tail window can cut a stored batch in two; look just before it once.
    if (verdict.kind === 'cut' && mayHaveEarlier && window[0]!.revision > 0n) {
      const earlier = await this.read(streamName, { direction: BACKWARDS, fromRevision: window[0]!.revision - 1n, maxCount: k });
      window = [...earlier.reverse(), ...window];
      verdict = matchReplay(window, ids);
    }
    switch (verdict.kind) {
      case 'none':
        return null;
      case 'replay':
        return {
          nextExpectedRevision: Number(verdict.last.revision),
          lastPosition: verdict.last.position ? Number(verdict.last.position.commit) : await this.positionOfRevision(streamName, verdict.last.revision),
          replayed: true,
        };
      case 'cut':
      case 'conflict':
        throw new IdempotencyConflictError(streamName, verdict.id);
    }
  }

  /** Stream read as KurrentDB records: a missing (or soft-deleted) stream is empty, a tombstoned one throws ours. */
  async read(streamName: string, options: ReadRawOptions): Promise<KurrentRecordedEvent[]> {
    const out: KurrentRecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamName, {
        direction: options.direction,
        fromRevision: options.fromRevision,
        resolveLinkTos: false,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of read) if (resolved.event) out.push(resolved.event);
    } catch (err) {
      const type = errorType(err);
      if (type === ErrorType.STREAM_NOT_FOUND) return [];
      if (type === ErrorType.STREAM_DELETED || type === ErrorType.STREAM_TOMBSTONED) throw new StreamDeletedError(streamName);
      throw translateAccessError(err);
    }
    return out;
  }

  async lastRevision(streamName: string): Promise<bigint | null> {
    const [last] = await this.read(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
    return last ? last.revision : null;
  }

  /** Old servers leave the position out of append results. */
  async positionOfRevision(streamName: string, revision: bigint): Promise<number> {
    const [e] = await this.read(streamName, { direction: BACKWARDS, fromRevision: revision, maxCount: 1 });
    return e?.position ? Number(e.position.commit) : 0;
  }

  async isTombstoned(streamName: string): Promise<boolean> {
    try {
      await this.read(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
      return false;
    } catch (err) {
      return err instanceof StreamDeletedError;
    }
  }
}
