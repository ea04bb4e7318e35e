import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import type { EventStore, ReadAllOptions } from '../../src/eventstore/eventStore.js';
import { PositionWaiters } from '../../src/projector/positionWaiters.js';

/**
 * Read-your-writes (contracts §3: an Upload answers from the moment of the 202): a wait for a
 * position ends once the projection applied it, or at once when no event of the projection's types
 * lies between where it stands and the target.
 */
async function logOf(types: string[], answerAfterMs = 0): Promise<{ store: EventStore; reads: () => number }> {
  const inner = new SqliteEventStore({ path: ':memory:' });
  for (const type of types) await inner.appendToStream('s', [{ type, data: {} }]);
  let reads = 0;
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'readAll') {
        return async (options?: ReadAllOptions) => {
          reads++;
          // Read now, answered later: what was appended meanwhile is not in the answer.
          const events = await target.readAll(options);
          if (answerAfterMs > 0) await new Promise((r) => setTimeout(r, answerAfterMs));
          return events;
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return { store, reads: () => reads };
}

describe('PositionWaiters (contracts §3 read-your-writes)', () => {
  it('ends a wait at once when no event of its types lies before the target', async () => {
    const { store } = await logOf(['a', 'b', 'b']);
    const w = new PositionWaiters('pa', ['a'], store);
    w.advance(1);
    await w.waitFor(3, 1000);
  });

  it('holds a wait until the projection applies the event it reads', async () => {
    const { store } = await logOf(['b', 'a', 'b']);
    const w = new PositionWaiters('pa', ['a'], store);
    let done = false;
    const waiting = w.waitFor(3, 5000).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    w.advance(2);
    await waiting;
    expect(done).toBe(true);
  });

  it('reads the log once for many waits behind the same unapplied event, not once per wait', async () => {
    const { store, reads } = await logOf(['a', 'a', 'a', 'a', 'a']);
    const w = new PositionWaiters('pa', ['a'], store);
    const waits = [2, 3, 4, 5].map((target) => w.waitFor(target, 5000));
    await new Promise((r) => setImmediate(r));
    // Each wait is behind position 1, the first event the projection has not applied.
    expect(reads()).toBeLessThanOrEqual(1);
    w.advance(5);
    await Promise.all(waits);
  });

  it('does not end a wait on a shared read that began before its target was appended', async () => {
    const { store } = await logOf(['b'], 30);
    const w = new PositionWaiters('pa', ['a'], store);
    const first = w.waitFor(1, 5000);
    await new Promise((r) => setTimeout(r, 5));
    // Appended while the first wait's read is in flight; the second wait joins that read.
    await store.appendToStream('s', [{ type: 'a', data: {} }]);
    let done = false;
    const second = w.waitFor(2, 5000).then(() => (done = true));
    await first;
    await new Promise((r) => setTimeout(r, 80));
    expect(done).toBe(false);
    w.advance(2);
    await second;
  });

  it('reads the log again after a pause, so a wait behind an erased event ends', async () => {
    const { store } = await logOf(['b', 'a', 'b']);
    const w = new PositionWaiters('pa', ['a'], store);
    const waiting = w.waitFor(3, 5000);
    await new Promise((r) => setTimeout(r, 10));
    // The only event of its types is erased before the projection applied it.
    await store.deleteStream('s', { hard: true });
    await waiting;
  });

  it('fails a wait that outlives its timeout', async () => {
    const { store } = await logOf(['a', 'a']);
    const w = new PositionWaiters('pa', ['a'], store);
    await expect(w.waitFor(2, 60)).rejects.toThrow(/did not reach 2/);
  });

  it('follows the stored checkpoint while another process applies the projection', async () => {
    const { store } = await logOf(['a', 'a']);
    let stored = 0;
    const w = new PositionWaiters('pa', ['a'], store, async () => stored);
    const waiting = w.waitFor(2, 5000);
    await new Promise((r) => setTimeout(r, 10));
    // Applied elsewhere: this process's runner never advances, the stored checkpoint does.
    stored = 2;
    await waiting;
  });

  it('reads no stored checkpoint while this process applies the projection, and reads it again once it stops', async () => {
    const { store } = await logOf(['a', 'a']);
    let observed = 0;
    const w = new PositionWaiters('pa', ['a'], store, async () => (observed++, 0));
    w.applyingHere = true;
    const waiting = w.waitFor(2, 5000);
    await new Promise((r) => setTimeout(r, 10));
    w.advance(2);
    await waiting;
    expect(observed).toBe(0);
    w.applyingHere = false;
    await expect(w.waitFor(3, 60)).resolves.toBeUndefined();
    expect(observed).toBeGreaterThan(0);
  });
});
