import { describe, expect, it } from 'vitest';
import { JOB_INDEXES, JOBS, MongoWorkQueue } from '../../src/workqueue/mongoWorkQueue.js';
import { memoryMongo, type Call } from './memoryMongo.js';

/**
 * What the MongoDB work queue asks the server, checked without one (issue 26): every read is
 * served by a declared index (sorted reads by its keys in order, ending in the `_id`
 * tie-breaker), and every write is conditional on the state and generation it expects. The
 * stand-in records the calls of a run through every operation.
 */
type Sort = Record<string, 1 | -1>;
type Filter = Record<string, unknown>;

const isOperator = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).some((k) => k.startsWith('$'));

/** Fields a filter compares with equality (an index may lead with them before its sorted keys). */
function equalityFields(filter: Filter): Set<string> {
  return new Set(Object.entries(filter).filter(([f, v]) => !f.startsWith('$') && !isOperator(v)).map(([f]) => f));
}

/** The declared index giving this read: equality fields, then the sort keys in order (or all reversed); unsorted, one led by a filtered field. */
function servedBy(filter: Filter, sort: Sort | undefined): string | null {
  const indexes = [...JOB_INDEXES, { keys: { _id: 1 } as Record<string, 1 | -1>, options: { name: '_id_' } }];
  const eq = equalityFields(filter);
  let best: { name: string; cut: number } | undefined;
  for (const { keys, options } of indexes) {
    const entries = Object.entries(keys);
    const partial = (options as { partialFilterExpression?: Filter }).partialFilterExpression;
    if (partial && !Object.entries(partial).every(([f, c]) => JSON.stringify(filter[f]) === JSON.stringify(c) || eq.has(f))) continue;
    if (!sort) {
      if (entries[0]![0] in filter) return options.name!;
      continue;
    }
    const order = Object.entries(sort);
    // The sort keys follow the equality fields: the index's tail, or the keys just after its equality prefix (a skip-scan of lane names).
    const lead = entries.findIndex(([f]) => !eq.has(f));
    const cut = order.length < entries.length - lead && lead >= 0 ? lead : entries.length - order.length;
    if (cut < 0 || !entries.slice(0, cut).every(([f]) => eq.has(f))) continue;
    const tail = entries.slice(cut, cut + order.length);
    const same = tail.every(([f, d], i) => f === order[i]![0] && d === order[i]![1]);
    const reversed = tail.every(([f, d], i) => f === order[i]![0] && d === -order[i]![1]);
    // Of several, the one that uses the most equality fields (as the server's planner prefers it).
    if ((same || reversed) && (!best || cut > best.cut)) best = { name: options.name!, cut };
  }
  return best?.name ?? null;
}

async function recordedRun(): Promise<Call[]> {
  const { db, calls } = memoryMongo();
  const queue = new MongoWorkQueue(db, { retentionMs: 1_000 });
  await queue.ensureIndexes();
  await queue.enqueue({ kind: 'pull', key: 'a', lock: 'conn-1' }, 0);
  await queue.enqueue({ kind: 'pull', key: 'a', priority: -1 }, 0);
  await queue.enqueue({ kind: 'pull', key: 'b', lock: 'conn-1' }, 0);
  await queue.enqueue({ kind: 'etl', key: 'c' }, 0);
  await queue.enqueue({ kind: 'etl', key: 'd', maxAttempts: 1 }, 0);
  const [a, c] = await queue.claim({ kinds: ['pull', 'etl'], n: 2, holder: 'h', leaseMs: 10, now: 0 });
  await queue.heartbeat(a!.lease, { leaseMs: 10, progress: { p: 1 }, now: 1 });
  await queue.fail(a!.lease, { error: 'e', retryAt: null, now: 2 });
  await queue.park(c!.lease, { error: 'e', now: 2 });
  const [d] = await queue.claim({ kinds: ['etl'], n: 1, holder: 'h', leaseMs: 10, now: 3 });
  await queue.claim({ kinds: ['etl'], n: 1, holder: 'h2', leaseMs: 10, now: 100 }); // takes d over: dead
  await queue.claim({ kinds: ['pull'], n: 1, holder: 'h', leaseMs: 10, now: 20_000 });
  await queue.claim({ kinds: ['pull'], n: 1, holder: 'h2', leaseMs: 10, now: 20_001 }); // conn-1 held: none
  const [e] = await queue.claim({ kinds: ['pull'], n: 1, holder: 'h2', leaseMs: 10, now: 20_010 }); // takes it over: available again
  await queue.cancel(e!.lease, { reason: 'r', now: 20_011 });
  const [f] = await queue.claim({ kinds: ['pull'], n: 1, holder: 'h', leaseMs: 10, now: 20_012 });
  await queue.complete(f!.lease, { now: 20_013 });
  await queue.cancelJob(f!.job.id, { reason: 'r' });
  await queue.replay(c!.job.id, 30_000);
  await queue.findLive('pull', 'a');
  await queue.get(d!.job.id);
  await queue.deadLetters({ kind: 'etl', after: { finishedAt: 10 ** 6, id: 'z' } });
  await queue.deadLetters();
  await queue.purgeDead({ ids: ['x'] });
  await queue.purgeDead({ kind: 'etl' });
  await queue.purgeDead({});
  await queue.purgeExpired({ now: 10 ** 7 });
  await queue.counts();
  return calls.filter((call) => call.collection === JOBS);
}

describe('MongoDB work queue: requests (no server needed)', () => {
  it('every index but the unique and TTL ones ends in the _id tie-breaker, in the direction of its last key', () => {
    for (const { keys, options } of JOB_INDEXES) {
      if (options.unique || options.expireAfterSeconds !== undefined) continue;
      const entries = Object.entries(keys);
      expect(entries[entries.length - 1]![0], options.name).toBe('_id');
      expect(entries[entries.length - 1]![1], options.name).toBe(entries[entries.length - 2]![1]);
    }
  });

  it('every read is served by a declared index; the claim reads due jobs of a kind in priority, due time, _id order from the "due" index', async () => {
    const calls = await recordedRun();
    const finds = calls.filter((c) => c.op === 'find').map((c) => ({ filter: c.args[0] as Filter, sort: (c.args[2] as { sort?: Sort } | undefined)?.sort }));
    expect(finds.length).toBeGreaterThan(10);
    expect(finds.filter((f) => !servedBy(f.filter, f.sort)).map((f) => JSON.stringify(f))).toEqual([]);
    const claims = finds.filter((f) => f.filter.state === 'available' && f.sort && 'priority' in f.sort);
    expect(claims.length).toBeGreaterThan(0);
    for (const f of claims) {
      expect(f.sort).toEqual({ priority: 1, runAt: 1, _id: 1 });
      // A lane's best job (contracts §18, fairLanes.ts) from its lane's index; the lane '' (and jobs from before lanes) from "due".
      expect(servedBy(f.filter, f.sort)).toBe(typeof f.filter.laneUser === 'string' ? 'user_due' : typeof f.filter.laneTenant === 'string' ? 'tenant_due' : 'due');
      expect(f.filter.runAt).toEqual({ $lte: expect.any(Number) });
    }
    // The fair claim's skip-scans of lane names read the lanes' indexes in name order.
    const scans = finds.filter((f) => f.filter.state === 'available' && !claims.includes(f));
    expect(scans.length).toBeGreaterThan(0);
    for (const f of scans) expect(['tenant_due', 'user_due']).toContain(servedBy(f.filter, f.sort));
    // Once a lock is held, the claim leaves its jobs out in the query.
    expect(claims.some((f) => JSON.stringify(f.filter.lock) === JSON.stringify({ $nin: ['conn-1'] }))).toBe(true);
    expect(finds.filter((f) => f.filter.state === 'running').every((f) => servedBy(f.filter, f.sort) === 'leases')).toBe(true);
    // Point reads and writes name the job (or its live key).
    const pointed = calls.filter((c) => ['findOne', 'findOneAndUpdate', 'updateOne', 'deleteMany'].includes(c.op));
    expect(pointed.filter((c) => !('_id' in (c.args[0] as Filter)) && !('dedupe' in (c.args[0] as Filter))).map((c) => JSON.stringify(c.args))).toEqual([]);
  });

  it('a claim is one conditional write per job: still available, same generation, due; it raises the generation and counts the attempt', async () => {
    const calls = await recordedRun();
    const takes = calls.filter((c) => c.op === 'findOneAndUpdate' && (c.args[0] as Filter).state === 'available' && '_id' in (c.args[0] as Filter));
    expect(takes.length).toBeGreaterThan(0);
    for (const take of takes) {
      const [filter, update] = take.args as [Filter, { $set: Filter; $inc: Filter }];
      expect(Object.keys(filter).sort()).toEqual(['_id', 'generation', 'runAt', 'state']);
      expect(update.$inc).toEqual({ attempts: 1, generation: 1 });
      expect(update.$set).toMatchObject({ state: 'running', holder: expect.any(String), leaseExpiresAt: expect.any(Number) });
    }
    // A job with a lock holds it in the same write (the unique `held_lock` index).
    expect(takes.some((t) => (t.args[1] as { $set: Filter }).$set.lockHeld === 'conn-1')).toBe(true);
  });

  it('every holder write is fenced by job, holder, generation and running state; a take-over by state, generation and expiry, one generation up', async () => {
    const calls = await recordedRun();
    const fenced = calls.filter((c) => ['findOneAndUpdate', 'findOne'].includes(c.op) && (c.args[0] as Filter).state === 'running');
    // heartbeat, fail (read and write), park, cancel, complete
    expect(fenced.length).toBeGreaterThanOrEqual(6);
    for (const c of fenced) expect(Object.keys(c.args[0] as Filter).sort()).toEqual(['_id', 'generation', 'holder', 'state']);
    const takeOvers = calls.filter((c) => c.op === 'updateOne' && (c.args[0] as Filter).state === 'running');
    expect(takeOvers).toHaveLength(2);
    for (const t of takeOvers) {
      const [filter, update] = t.args as [Filter, { $inc: Filter; $unset: Filter }];
      expect(filter).toMatchObject({ state: 'running', generation: expect.any(Number), leaseExpiresAt: { $lte: expect.any(Number) } });
      expect(update.$inc).toEqual({ generation: 1 });
      expect(update.$unset).toHaveProperty('lockHeld');
    }
  });

  it('a job leaving the live states frees its key and lock in the same write; completed and cancelled ones get the TTL date', async () => {
    const calls = await recordedRun();
    const finishing = calls.filter((c) => c.op !== 'find' && ['completed', 'cancelled', 'dead'].includes(((c.args[1] as { $set?: Filter } | undefined)?.$set?.state as string) ?? ''));
    expect(new Set(finishing.map((c) => (c.args[1] as { $set: Filter }).$set.state))).toEqual(new Set(['completed', 'cancelled', 'dead']));
    for (const c of finishing) {
      const update = c.args[1] as { $set: Filter; $unset: Filter };
      expect(update.$unset).toEqual({ dedupe: '', lockHeld: '' });
      if (update.$set.state === 'dead') expect(update.$set.expireAt).toBeUndefined();
      else expect(update.$set.expireAt).toBeInstanceOf(Date);
    }
    const ttl = JOB_INDEXES.find((ix) => ix.options.expireAfterSeconds !== undefined)!;
    expect(ttl.keys).toEqual({ expireAt: 1 });
    expect(ttl.options.expireAfterSeconds).toBe(0);
  });
});
