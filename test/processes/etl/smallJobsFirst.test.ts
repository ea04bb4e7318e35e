import { afterEach, describe, expect, it, vi } from 'vitest';
import { SmallJobsFirst } from '../../../src/processes/etl/smallJobsFirst.js';

/**
 * Issue 27 (fairness): within one ETL thread a bulk job waits before each append while small
 * jobs run, so a phone's upload is not held behind an import's long stretches; and it waits at
 * most a bounded time a step, so the import always moves.
 */
describe('SmallJobsFirst: a bulk job lets its thread’s small jobs go first (issue 27, fairness)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets a bulk job go on at once when no small job runs', () => {
    expect(new SmallJobsFirst().yieldToSmall()).toBeUndefined();
  });

  it('holds a bulk job while a small job runs, and lets it go the moment the last small job ends', async () => {
    const order = new SmallJobsFirst(60_000);
    let finishSmall!: () => void;
    const small = order.small(() => new Promise<string>((r) => (finishSmall = () => r('small done'))));
    const events: string[] = [];
    const bulk = order.yieldToSmall()!.then(() => events.push('bulk resumed'));
    await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual([]);
    finishSmall();
    await bulk;
    expect(events).toEqual(['bulk resumed']);
    expect(await small).toBe('small done');
    expect(order.smallRunning).toBe(0);
  });

  it('lets a bulk job go after maxWaitMs even while small jobs keep running, and forgets the waiter', async () => {
    vi.useFakeTimers();
    const order = new SmallJobsFirst(250);
    void order.small(() => new Promise(() => {}));
    let resumed = false;
    void order.yieldToSmall()!.then(() => (resumed = true));
    await vi.advanceTimersByTimeAsync(249);
    expect(resumed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(resumed).toBe(true);
    // A bulk job that waited out its time is not kept: repeated waits do not pile up.
    for (let i = 0; i < 100; i++) {
      const w = order.yieldToSmall()!;
      await vi.advanceTimersByTimeAsync(250);
      await w;
    }
    expect((order as unknown as { waiting: Set<unknown> }).waiting.size).toBe(0);
  });

  it('counts a small job that failed as ended', async () => {
    const order = new SmallJobsFirst();
    await expect(order.small(async () => Promise.reject(new Error('bad upload')))).rejects.toThrow('bad upload');
    expect(order.smallRunning).toBe(0);
    expect(order.yieldToSmall()).toBeUndefined();
  });
});
