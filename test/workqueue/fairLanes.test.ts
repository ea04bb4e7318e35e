import { describe, expect, it } from 'vitest';
import { LaneCursors, pickFair, pickFairSync, type LaneCandidate, type LaneRead } from '../../src/workqueue/fairLanes.js';

/**
 * The fair pick's reads (contracts §18; issue 37: the cost of a claim), answered from jobs held in
 * memory as the stores answer them: available jobs only, lanes in name order, a lane's best job
 * by priority, due time and id.
 */
function memoryLanes(jobs: LaneCandidate[]) {
  let reads = 0;
  const read = (r: LaneRead) => {
    reads++;
    if (r.op === 'running') return 0;
    const inScope = jobs.filter((j) => r.tenant === undefined || j.tenant === r.tenant);
    if (r.op === 'next') {
      const lanes = [...new Set(inScope.map((j) => (r.tenant === undefined ? j.tenant : j.user)))].sort();
      return lanes.find((lane) => r.after === null || lane > r.after);
    }
    const order = (a: LaneCandidate, b: LaneCandidate) => a.priority - b.priority || a.runAt - b.runAt || (a.id < b.id ? -1 : 1);
    return inScope.filter((j) => r.user === undefined || j.user === r.user).sort(order)[0];
  };
  const cursors = new LaneCursors();
  return {
    /** Takes the next job as a claim would; answers it and the reads it took. */
    pick(): { job: LaneCandidate | undefined; reads: number } {
      reads = 0;
      const job = pickFairSync(pickFair<LaneCandidate>('etl', cursors, 4), read);
      if (job) {
        jobs.splice(jobs.indexOf(job), 1);
        cursors.served('etl', job);
      }
      return { job, reads };
    },
  };
}

const job = (user: string, priority: number, i: number): LaneCandidate => ({ tenant: 't', user, priority, runAt: i, id: `j${String(i).padStart(4, '0')}` });

describe('fair picks (contracts §18, issue 37)', () => {
  it("issue 37: among many users with jobs of one priority, a pick reads one user's lane: its reads do not grow with the users, and the users still take turns", () => {
    const users = Array.from({ length: 200 }, (_, i) => `user-${String(i).padStart(3, '0')}`);
    const lanes = memoryLanes(users.map((u, i) => job(u, 0, i)));
    const picks = Array.from({ length: 50 }, () => lanes.pick());
    expect(picks.map((p) => p.job?.user)).toEqual(users.slice(0, 50));
    expect(Math.max(...picks.map((p) => p.reads))).toBeLessThanOrEqual(6);
  });

  it("contracts §18: a user later in the turn with a more urgent job goes first; one beyond the 32 users looked at is reached through the tenant's best job, and the turns go on after the user served", () => {
    const users = Array.from({ length: 40 }, (_, i) => `user-${String(i).padStart(3, '0')}`);
    const jobs = users.map((u, i) => job(u, 5, i));
    jobs.push(job('user-010', 1, 100), job('user-039', 0, 101));
    const lanes = memoryLanes(jobs);
    expect([lanes.pick().job?.id, lanes.pick().job?.id, lanes.pick().job?.user]).toEqual(['j0101', 'j0100', 'user-011']);
  });
});
