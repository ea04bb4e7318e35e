/**
 * Fair claims (contracts §18, issue 34 §8; docs/fair-sharing.md): a tenant's jobs never hold
 * another tenant's back. Each kind's due jobs are in lanes, one per tenant and within it one per
 * user (a job enqueued without them is in the lane ''). A claim takes its jobs one at a time:
 *
 * 1. the tenants with available jobs of the kind, in rotation order starting after the tenant
 *    served last (at most MAX_LANES of them), each with its best due job (priority, due time, id);
 * 2. a tenant already running `tenantCap` jobs of the kind is passed over while another tenant
 *    has a due job (so a running import keeps at most its share of a lane's slots);
 * 3. of the rest, those whose best job has the most urgent priority, the first in rotation order;
 * 4. within that tenant the same rotation over its users (priority first), and the user's best job.
 *
 * Every read is one index seek (a "next lane after x" skip-scan, a best job, a count of at most
 * `tenantCap` running jobs), and a claim makes at most 2 × MAX_LANES + 2 of them per job taken,
 * whatever the table holds. The users' rotation stops at the first user whose best job is as
 * urgent as the tenant's best (no later user can come first): with jobs of one priority, a pick
 * reads one user's lane, not MAX_LANES of them (issue 37). Where the window of MAX_LANES lanes shows no due job (lanes of jobs
 * waiting to retry), the kind's best due job overall is taken, as before the lanes: a claim never
 * comes back empty while a due job exists.
 *
 * The rotation's position (the last tenant served per kind, the last user per kind and tenant) is
 * kept by the queue object, in memory: processes sharing a queue each rotate on their own, which
 * is as fair as one shared rotation over the jobs each one takes.
 *
 * The choice is written once, as a generator of the reads it needs: the embedded queue answers
 * them inside its write transaction, the MongoDB one with awaited queries.
 */

/** Lanes (tenants, or users of a tenant) looked at per pick: what bounds a claim's reads. */
const MAX_LANES = 32;
/** Rotation positions kept at most; past it they are forgotten (a rotation starts again from the first lane). */
const MAX_CURSORS = 10_000;

export type LaneCandidate = { tenant: string; user: string; priority: number; runAt: number; id: string };

export type LaneRead =
  /** The first lane name after `after` (null: the first of all), of the kind's available jobs; of a tenant's users when `tenant` is given. */
  | { op: 'next'; kind: string; tenant?: string; after: string | null }
  /** The best due job whose lock is free: of a tenant (and user), or of the kind when neither is given. */
  | { op: 'best'; kind: string; tenant?: string; user?: string }
  /** Running jobs of the kind and tenant, counted up to `limit`. */
  | { op: 'running'; kind: string; tenant: string; limit: number };

/** What a read answers: a lane name, a candidate, or a count. */
export type LaneAnswer<C> = string | C | number | undefined;

/** The rotation positions of one queue object. */
export class LaneCursors {
  private readonly last = new Map<string, string>();

  get(lane: string): string | null {
    return this.last.get(lane) ?? null;
  }

  /** The job taken: its tenant and user are now the last served of their rotations. */
  served(kind: string, candidate: LaneCandidate): void {
    if (this.last.size >= MAX_CURSORS) this.last.clear();
    this.last.set(kind, candidate.tenant);
    this.last.set(`${kind}\n${candidate.tenant}`, candidate.user);
  }
}

/**
 * The next job of `kind` for a claim, as a generator: each `yield` is a read whose answer the
 * driver passes back to `next()`. Answers undefined when the kind has no due job.
 */
export function* pickFair<C extends LaneCandidate>(kind: string, cursors: LaneCursors, tenantCap: number | undefined): Generator<LaneRead, C | undefined, LaneAnswer<C>> {
  const tenants: { lane: string; best: C }[] = [];
  const tenantLanes = yield* rotation<C>(kind, undefined, cursors.get(kind), function* (tenant) {
    const best = (yield { op: 'best', kind, tenant }) as C | undefined;
    if (best) tenants.push({ lane: tenant, best });
    return false;
  });
  // No lane at all: the kind has no available job, so no best one either.
  if (tenantLanes === 0) return undefined;
  if (tenants.length === 0) return (yield { op: 'best', kind }) as C | undefined;
  let open = tenants;
  if (tenantCap !== undefined && tenants.length > 1) {
    const under: typeof tenants = [];
    for (const t of tenants) if (((yield { op: 'running', kind, tenant: t.lane, limit: tenantCap }) as number) < tenantCap) under.push(t);
    if (under.length > 0) open = under;
  }
  const chosen = firstMostUrgent(open);
  const users: { lane: string; best: C }[] = [];
  yield* rotation<C>(kind, chosen.lane, cursors.get(`${kind}\n${chosen.lane}`), function* (user) {
    const best = (yield { op: 'best', kind, tenant: chosen.lane, user }) as C | undefined;
    if (best) users.push({ lane: user, best });
    // The tenant's best job is the most urgent of all its users' jobs: a user whose best job is as
    // urgent is the first most urgent of the rotation, and the users after it cannot change that.
    return best !== undefined && best.priority === chosen.best.priority;
  });
  const byUser = users.length ? firstMostUrgent(users) : undefined;
  // A user beyond the window may hold the tenant's most urgent job: then that job goes first.
  return byUser && byUser.best.priority <= chosen.best.priority ? byUser.best : chosen.best;
}

/** Drives `pickFair` with synchronous reads (inside a SQLite transaction). */
export function pickFairSync<C extends LaneCandidate>(pick: Generator<LaneRead, C | undefined, LaneAnswer<C>>, read: (r: LaneRead) => LaneAnswer<C>): C | undefined {
  let step = pick.next();
  while (!step.done) step = pick.next(read(step.value));
  return step.value;
}

/** Drives `pickFair` with awaited reads (MongoDB). */
export async function pickFairAsync<C extends LaneCandidate>(pick: Generator<LaneRead, C | undefined, LaneAnswer<C>>, read: (r: LaneRead) => Promise<LaneAnswer<C>>): Promise<C | undefined> {
  let step = pick.next();
  while (!step.done) step = pick.next(await read(step.value));
  return step.value;
}

/**
 * The lanes after `cursor`, then from the first up to it: at most MAX_LANES, each once, each
 * visited as it is read; a visit answering true ends the walk (the lanes after it are not read).
 * Answers how many lanes were visited.
 */
function* rotation<C extends LaneCandidate>(
  kind: string,
  tenant: string | undefined,
  cursor: string | null,
  visit: (lane: string) => Generator<LaneRead, boolean, LaneAnswer<C>>,
): Generator<LaneRead, number, LaneAnswer<C>> {
  let visited = 0;
  for (const wrapped of cursor === null ? [false] : [false, true]) {
    let after = wrapped ? null : cursor;
    while (visited < MAX_LANES) {
      const lane = (yield { op: 'next', kind, tenant, after }) as string | undefined;
      if (lane === undefined || (wrapped && lane > cursor!)) break;
      visited++;
      if (yield* visit(lane)) return visited;
      after = lane;
    }
  }
  return visited;
}

/** The first lane, in rotation order, of those whose best job has the most urgent priority. */
function firstMostUrgent<C extends LaneCandidate>(lanes: { lane: string; best: C }[]): { lane: string; best: C } {
  const priority = Math.min(...lanes.map((l) => l.best.priority));
  return lanes.find((l) => l.best.priority === priority)!;
}
