import { describe, expect, it } from 'vitest';
import { ProjectorPacing, type ProjectorPositions } from '../../../src/processes/etl/projectorPacing.js';

/**
 * contracts §18 (issue 34 §8): a bulk ETL job never runs far ahead of the record projections, so
 * that another tenant's small upload is not queued behind hundreds of thousands of its records.
 * A fake log and projector: each append moves the head by one; the projector moves when told.
 * Time is a counter the fake sleep moves: nothing here waits on the clock.
 */
function fakes(lead: number, maxWaitMs = 1_000) {
  const state = { head: 0, applied: 0, sleeps: 0, clock: 0 };
  const positions: ProjectorPositions = {
    head: async () => state.head,
    reached: async (position) => state.applied >= position,
  };
  const pacing = new ProjectorPacing(positions, {
    lead,
    // One look every 10 ms of fake time: these tests count looks against the wait's bound (the pauses' growth has its own test).
    pollMs: 10,
    maxPollMs: 10,
    maxWaitMs,
    now: () => state.clock,
    sleep: async (ms) => {
      state.sleeps++;
      state.clock += ms;
      await new Promise<void>((r) => setImmediate(r));
    },
  });
  const append = async () => {
    await pacing.beforeAppend();
    state.head++;
  };
  return { state, append };
}

describe('projector pacing of bulk ETL jobs (contracts §18)', () => {
  it('contracts §18: appends go on without waiting while the projections keep up', async () => {
    const { state, append } = fakes(3);
    for (let i = 0; i < 20; i++) {
      await append();
      state.applied = state.head;
    }
    expect(state.head).toBe(20);
    expect(state.sleeps).toBe(0);
  });

  it('contracts §18: a job whose appends the projections have not applied waits once it is `lead` appends ahead, and goes on when they catch up', async () => {
    const { state, append } = fakes(3, 60_000);
    for (let i = 0; i < 4; i++) await append();
    expect(state.head).toBe(4);
    // The fifth append waits: the projections are at 0, the head it noted three appends ago is 1.
    let done = false;
    const fifth = append().then(() => (done = true));
    for (let i = 0; i < 50; i++) await new Promise<void>((r) => setImmediate(r));
    expect(done).toBe(false);
    expect(state.head).toBe(4);
    expect(state.sleeps).toBeGreaterThan(0);
    state.applied = 1;
    await fifth;
    expect(state.head).toBe(5);
  });

  it('contracts §18: a stalled projector holds the job for one bounded wait, not one per append, and pacing resumes once it moves', async () => {
    const { state, append } = fakes(2, 1_000);
    for (let i = 0; i < 3; i++) await append();
    const before = state.clock;
    await append(); // waits up to 1 s of fake time, then gives up
    expect(state.clock - before).toBeGreaterThanOrEqual(1_000);
    const sleeps = state.sleeps;
    for (let i = 0; i < 10; i++) await append();
    expect(state.sleeps).toBe(sleeps);
    // The projector moves past where the job gave up (but not up to the job): the job is paced again.
    state.applied = 2;
    let done = false;
    const next = append().then(() => (done = true));
    for (let i = 0; i < 50; i++) await new Promise<void>((r) => setImmediate(r));
    expect(done).toBe(false);
    state.applied = state.head;
    await next;
  });

  it('contracts §18: a lead of 0 turns pacing off', async () => {
    const { state, append } = fakes(0);
    for (let i = 0; i < 10; i++) await append();
    expect(state.sleeps).toBe(0);
  });
});

describe('projector pacing looks less often the longer it waits (issue 38)', () => {
  it('issue 38: a waiting job looks again after pollMs, then twice as long each time up to maxPollMs, and a new wait starts at pollMs again', async () => {
    const pauses: number[] = [];
    const state = { head: 0, applied: 0, clock: 0 };
    const pacing = new ProjectorPacing(
      { head: async () => state.head, reached: async (position) => state.applied >= position },
      {
        lead: 1,
        pollMs: 10,
        maxPollMs: 40,
        maxWaitMs: 60_000,
        now: () => state.clock,
        sleep: async (ms) => {
          pauses.push(ms);
          state.clock += ms;
          // The projector reaches what the job waits for (the head before its previous append) after the sixth look of a wait.
          if (pauses.length % 6 === 0) state.applied = state.head - 1;
        },
      },
    );
    for (let i = 0; i < 4; i++) {
      await pacing.beforeAppend();
      state.head++;
    }
    expect(pauses).toEqual([10, 20, 40, 40, 40, 40, 10, 20, 40, 40, 40, 40]);
  });
});
