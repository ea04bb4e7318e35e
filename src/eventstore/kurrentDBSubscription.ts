import { START, type AllStreamRecordedEvent, type AllStreamResolvedEvent, type AllStreamSubscription, type ReadPosition } from '@kurrent/kurrentdb-client';

/**
 * A catch-up subscription to $all that survives drops: KurrentDB does not restore a dropped
 * subscription, so it is opened again from the last position delivered (events at or before it,
 * which the server re-sends from an inclusive start, are dropped here). Repeated drops back off;
 * after MAX_RESUBSCRIBES in a row without progress the subscription fails.
 */
const MAX_RESUBSCRIBES = 5;
const RESUBSCRIBE_BASE_MS = 250;
/** A subscription that lived this long before dropping was healthy: its drop starts a fresh retry budget. */
const STABLE_SUBSCRIPTION_MS = 30_000;

export type ResumingSubscription = {
  /** Exclusive start: the checkpoint already handled. */
  after: bigint | null;
  /** The secondary index the filter reads from, if any. */
  index: string | null;
  open: (fromPosition: ReadPosition, useIndex: boolean) => AllStreamSubscription;
  /** Each event after the checkpoint, once, in log order. */
  deliver: (event: AllStreamRecordedEvent) => void;
  /** True when an index subscription failed because the server cannot read the index: go on without it. */
  indexFailed: (err: unknown) => boolean;
  isClosed: () => boolean;
  complete: () => void;
  fail: (err: unknown) => void;
};

/** Starts the subscription; the answer stops it. */
export function subscribeWithResume(s: ResumingSubscription): () => void {
  let cursor = s.after;
  let useIndex = s.index !== null;
  let current: AllStreamSubscription | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let failures = 0;
  let stopped = false;

  const stop = () => {
    stopped = true;
    clearTimeout(retryTimer);
    const sub = current;
    current = null;
    if (sub) void sub.unsubscribe().catch(() => {});
  };

  const connect = () => {
    if (stopped) return;
    let sub: AllStreamSubscription;
    try {
      sub = s.open(cursor === null ? START : { commit: cursor, prepare: cursor }, useIndex);
    } catch (err) {
      stop();
      s.fail(err);
      return;
    }
    current = sub;
    const startedAt = Date.now();
    let progressed = false;

    sub.on('data', (resolved: AllStreamResolvedEvent) => {
      if (current !== sub) return;
      const e = resolved.event;
      if (!e) return;
      if (cursor !== null && e.position.commit <= cursor) return;
      cursor = e.position.commit;
      progressed = true;
      s.deliver(e);
    });

    const dropped = (err?: unknown) => {
      if (current !== sub) return;
      current = null;
      void sub.unsubscribe().catch(() => {});
      if (s.isClosed()) {
        stop();
        s.complete();
        return;
      }
      if (useIndex && err !== undefined && s.indexFailed(err)) {
        useIndex = false;
        connect();
        return;
      }
      if (progressed || Date.now() - startedAt >= STABLE_SUBSCRIPTION_MS) failures = 0;
      failures += 1;
      if (failures > MAX_RESUBSCRIBES) {
        stop();
        s.fail(err ?? new Error('KurrentDB subscription to $all ended'));
        return;
      }
      retryTimer = setTimeout(connect, RESUBSCRIBE_BASE_MS * 2 ** (failures - 1));
    };
    // Our own unsubscribe cancels the call; the client swallows that cancellation, and
    // `current !== sub` ignores whatever else follows it.
    sub.on('error', (err: Error) => dropped(err));
    sub.on('end', () => dropped());
    sub.on('close', () => dropped());
  };

  connect();
  return stop;
}
