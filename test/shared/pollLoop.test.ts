import { expect, it } from 'vitest';
import { PollLoop } from '../../src/shared/pollLoop.js';

it('issue 37: a kick that arrives while a run is under way starts another run once it ends, not a poll interval later', async () => {
  let release!: () => void;
  const firstBlocked = new Promise<void>((r) => (release = r));
  let secondRan!: () => void;
  const second = new Promise<void>((r) => (secondRan = r));
  let runs = 0;
  let kickDuringRun!: () => void;
  const running = new Promise<void>((r) => (kickDuringRun = r));
  // An hour between polls: only the kick can bring the second run within the test's time.
  const loop = new PollLoop(
    async () => {
      runs++;
      if (runs === 1) {
        kickDuringRun();
        await firstBlocked;
      } else secondRan();
    },
    3_600_000,
    (err) => {
      throw err;
    },
  );
  loop.start();
  try {
    await running;
    loop.kick();
    release();
    await second;
    expect(runs).toBe(2);
  } finally {
    loop.stop();
  }
});
