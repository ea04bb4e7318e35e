import type { Collection, CreateIndexesOptions, Db, Document, Filter, UpdateFilter } from 'mongodb';
import { acquireMongoClient, type MongoHandle } from '../readstore/mongoConnection.js';
import { LaneCursors, pickFair, pickFairAsync, type LaneAnswer, type LaneCandidate, type LaneRead } from './fairLanes.js';
import { checkClaim, checkLeaseMs, checkLimit, checkName, checkTime, checkedJson, claimOrder, errorText, newJob } from './jobInput.js';
import {
  DEFAULT_RETENTION_MS,
  defaultBackoff,
  LostLeaseError,
  MAX_CLAIM,
  MAX_LIST,
  TAKEOVER_BATCH,
  type Claimed,
  type ClaimRequest,
  type DeadLetterQuery,
  type Enqueued,
  type Job,
  type JobLease,
  type JobState,
  type Json,
  type NewJob,
  type QueueOptions,
  type ReplayOutcome,
  type WorkQueue,
} from './workQueue.js';

/**
 * A job as stored: the port's fields, `_id` for `id`, its lane as `laneTenant` and `laneUser`
 * ('' for none, so that a lane's range is one index range; a job stored before them has neither,
 * and is claimed when no lane has a due job, as fairLanes.ts falls back to the kind's best job), and three derived fields the indexes work on. `dedupe` (kind and key) is present only while the job is live and `lockHeld` only while it
 * runs; a unique partial index on each makes the server refuse a second live job of a key, or a
 * second running job of a lock, in the same atomic write that would create it. `expireAt` is the
 * BSON date the TTL index removes finished jobs by.
 */
export type JobDoc = Omit<Job, 'id' | 'tenant' | 'user'> & { _id: string; laneTenant?: string; laneUser?: string; dedupe?: string; lockHeld?: string; expireAt?: Date };

export const JOBS = '_jobs';
const DUPLICATE_KEY = 11000;

/** Every index ends in `_id`, the claim's and the listings' tie-breaker (except unique and TTL ones). */
export const JOB_INDEXES: readonly { keys: Record<string, 1 | -1>; options: CreateIndexesOptions }[] = [
  { keys: { kind: 1, state: 1, priority: 1, runAt: 1, _id: 1 }, options: { name: 'due' } },
  // The fair claim's reads (fairLanes.ts): tenants and users with available jobs, a lane's best due job, a tenant's running jobs.
  { keys: { kind: 1, state: 1, laneTenant: 1, priority: 1, runAt: 1, _id: 1 }, options: { name: 'tenant_due' } },
  { keys: { kind: 1, state: 1, laneTenant: 1, laneUser: 1, priority: 1, runAt: 1, _id: 1 }, options: { name: 'user_due' } },
  { keys: { state: 1, leaseExpiresAt: 1, _id: 1 }, options: { name: 'leases' } },
  { keys: { dedupe: 1 }, options: { name: 'live_key', unique: true, partialFilterExpression: { dedupe: { $type: 'string' } } } },
  { keys: { lockHeld: 1 }, options: { name: 'held_lock', unique: true, partialFilterExpression: { lockHeld: { $type: 'string' } } } },
  { keys: { state: 1, finishedAt: -1, _id: -1 }, options: { name: 'finished' } },
  { keys: { state: 1, kind: 1, finishedAt: -1, _id: -1 }, options: { name: 'finished_by_kind' } },
  { keys: { expireAt: 1 }, options: { name: 'retention', expireAfterSeconds: 0 } },
  { keys: { state: 1, kind: 1, key: 1, finishedAt: -1, _id: -1 }, options: { name: 'dead_by_key' } },
];

const CLAIM_SORT = { priority: 1, runAt: 1, _id: 1 } as const;
const NEWEST_FIRST = { finishedAt: -1, _id: -1 } as const;

/**
 * The work queue on MongoDB, in the read store's database. No multi-document transaction is
 * assumed: every change is one conditional write on one job (`findOneAndUpdate` whose filter is
 * the state and generation it expects), so two processes never both move a job, and a holder's
 * write names the generation it holds. Exclusivity needs no lock document that could outlive a
 * crashed holder: the running job itself holds its lock (`lockHeld`, unique), and gives it up in
 * the same write that ends its run or hands it back.
 */
export class MongoWorkQueue implements WorkQueue {
  readonly backend = 'mongodb' as const;
  private readonly jobs: Collection<JobDoc>;
  private readonly clock: () => number;
  private readonly retentionMs: number;
  private readonly cursors = new LaneCursors();
  private readonly backoff: (attempts: number) => number;

  constructor(db: Db, options: QueueOptions & { handle?: MongoHandle } = {}) {
    this.jobs = db.collection<JobDoc>(JOBS);
    this.clock = options.clock ?? Date.now;
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.backoff = options.backoff ?? defaultBackoff;
    this.handle = options.handle;
  }

  private readonly handle: MongoHandle | undefined;

  static async connect(options: { url: string; database: string } & QueueOptions): Promise<MongoWorkQueue> {
    // One client per process, shared with the read and raw stores (src/readstore/mongoConnection.ts).
    const handle = await acquireMongoClient(options.url);
    const queue = new MongoWorkQueue(handle.client.db(options.database), { ...options, handle });
    await queue.ensureIndexes();
    return queue;
  }

  async ensureIndexes(): Promise<void> {
    for (const { keys, options } of JOB_INDEXES) await this.jobs.createIndex(keys, options);
  }

  async enqueue(input: NewJob, now = this.clock()): Promise<Enqueued> {
    const job = newJob(input, now);
    const dedupe = job.key === null ? undefined : dedupeOf(job.kind, job.key);
    // Bounded: each round either finds the live job or inserts; a collision means one appeared meanwhile.
    for (let round = 0; round < 4; round++) {
      if (dedupe !== undefined) {
        const live = await this.live(dedupe, job, now);
        if (live) return { job: live, created: false };
      }
      try {
        await this.jobs.insertOne(toDoc(job, dedupe));
        return { job, created: true };
      } catch (err) {
        if (!isDuplicate(err) || dedupe === undefined) throw err;
      }
    }
    throw new Error(`job ${job.kind}/${job.key}: its live job kept changing while being enqueued`);
  }

  async claim(request: ClaimRequest): Promise<Claimed[]> {
    const now = request.now ?? this.clock();
    const { kinds, n, tenantCap } = checkClaim(request, now);
    await this.takeOver(kinds, now);
    const claimed: Claimed[] = [];
    // Locks held by running jobs: bounded by how many jobs run at once in the deployment.
    const held = new Set((await this.jobs.find({ lockHeld: { $type: 'string' } }, { projection: { lockHeld: 1 } }).toArray()).map((d) => d.lockHeld!));
    // Each pass takes each kind's next job in its lanes' turn (fairLanes.ts), the most urgent over the kinds.
    // A pass that lost its job to another claimer (or found its lock taken) reads again: each loss is a
    // job another claimer took, and a claim gives up after MAX_CLAIM of them.
    for (let lost = 0; claimed.length < n && lost < MAX_CLAIM; ) {
      let best: Lane | undefined;
      for (const kind of kinds) {
        const lane = await pickFairAsync(pickFair<Lane>(kind, this.cursors, tenantCap), (read) => this.laneRead(read, now, held));
        if (lane && (!best || claimOrder(lane, best) < 0)) best = lane;
      }
      if (!best) break;
      const taken = await this.take(best.doc, request, now);
      if (taken === 'locked') held.add(best.doc.lock!);
      if (taken === null || taken === 'locked') {
        lost++;
        continue;
      }
      this.cursors.served(best.doc.kind, best);
      claimed.push(taken);
      if (best.doc.lock !== null) held.add(best.doc.lock);
    }
    return claimed;
  }

  /** Answers one read of a fair pick (fairLanes.ts): each one index range, read to its first entry. */
  private async laneRead(read: LaneRead, now: number, held: ReadonlySet<string>): Promise<LaneAnswer<Lane>> {
    if (read.op === 'next') {
      const field = read.tenant === undefined ? 'laneTenant' : 'laneUser';
      const filter: Filter<JobDoc> = { kind: read.kind, state: 'available', ...(read.tenant === undefined ? {} : { laneTenant: read.tenant }), ...(read.after === null ? {} : { [field]: { $gt: read.after } }) };
      const [doc] = await this.jobs.find(filter, { projection: { [field]: 1 } }).sort({ [field]: 1 }).limit(1).toArray();
      return doc ? (doc[field] ?? '') : undefined;
    }
    if (read.op === 'running') {
      return (await this.jobs.find({ kind: read.kind, state: 'running', laneTenant: read.tenant }, { projection: { _id: 1 } }).limit(read.limit).toArray()).length;
    }
    const lane = { ...(read.tenant === undefined ? {} : { laneTenant: read.tenant }), ...(read.user === undefined ? {} : { laneUser: read.user }) };
    const [doc] = await this.jobs.find({ ...dueFilter(read.kind, now, held), ...lane }).sort(CLAIM_SORT).limit(1).toArray();
    return doc ? laneOf(doc) : undefined;
  }

  async heartbeat(lease: JobLease, options: { leaseMs: number; progress?: Json; now?: number }): Promise<JobLease> {
    const now = options.now ?? this.clock();
    checkLeaseMs(options.leaseMs);
    const progress = options.progress === undefined ? {} : { progress: checkedJson('progress', options.progress) };
    const doc = await this.fenced(lease, { $max: { leaseExpiresAt: now + options.leaseMs }, $set: { updatedAt: now, ...progress } });
    return { ...lease, expiresAt: doc.leaseExpiresAt! };
  }

  async complete(lease: JobLease, options: { now?: number } = {}): Promise<void> {
    await this.fenced(lease, this.finish('completed', options.now ?? this.clock(), {}));
  }

  async fail(lease: JobLease, options: { error: string; retryAt: number | null; progress?: Json; now?: number }): Promise<'available' | 'dead'> {
    const now = options.now ?? this.clock();
    if (options.retryAt !== null) checkTime('retryAt', options.retryAt);
    const outcome = { lastError: errorText(options.error), ...(options.progress === undefined ? {} : { progress: checkedJson('progress', options.progress) }) };
    // Attempts change only with the generation, so what is read here holds for the fenced write.
    const doc = await this.jobs.findOne(fenceOf(lease));
    if (!doc) throw new LostLeaseError(lease.jobId, lease.generation);
    if (doc.attempts >= doc.maxAttempts) {
      await this.fenced(lease, this.finish('dead', now, outcome));
      return 'dead';
    }
    const runAt = options.retryAt ?? now + this.backoff(doc.attempts);
    await this.fenced(lease, { $set: { ...outcome, state: 'available', runAt, leaseExpiresAt: null, updatedAt: now }, $unset: { lockHeld: '' } });
    return 'available';
  }

  async reschedule(lease: JobLease, options: { runAt: number; progress?: Json; now?: number }): Promise<void> {
    const now = options.now ?? this.clock();
    checkTime('runAt', options.runAt);
    const progress = options.progress === undefined ? {} : { progress: checkedJson('progress', options.progress) };
    await this.fenced(lease, { $set: { ...progress, state: 'available', runAt: options.runAt, attempts: 0, lastError: null, leaseExpiresAt: null, updatedAt: now }, $unset: { lockHeld: '' } });
  }

  async park(lease: JobLease, options: { error: string; progress?: Json; now?: number }): Promise<void> {
    const progress = options.progress === undefined ? {} : { progress: checkedJson('progress', options.progress) };
    await this.fenced(lease, this.finish('dead', options.now ?? this.clock(), { lastError: errorText(options.error), ...progress }));
  }

  async cancel(lease: JobLease, options: { reason: string; now?: number }): Promise<void> {
    await this.fenced(lease, this.finish('cancelled', options.now ?? this.clock(), { lastError: errorText(options.reason) }));
  }

  async cancelJob(id: string, options: { reason: string; now?: number }): Promise<boolean> {
    const update = this.finish('cancelled', options.now ?? this.clock(), { lastError: errorText(options.reason) });
    // A running job's holder is fenced off: its next write finds another generation.
    const doc = await this.jobs.findOneAndUpdate({ _id: id, state: { $in: ['available', 'running'] } }, { ...update, $inc: { generation: 1 } });
    return doc !== null;
  }

  async get(id: string): Promise<Job | null> {
    const doc = await this.jobs.findOne({ _id: id });
    return doc ? toJob(doc) : null;
  }

  async findLive(kind: string, key: string): Promise<Job | null> {
    const doc = await this.jobs.findOne({ dedupe: dedupeOf(kind, key) });
    return doc ? toJob(doc) : null;
  }

  async deadLetters(query: DeadLetterQuery = {}): Promise<Job[]> {
    const limit = checkLimit(query.limit, 100);
    const filter: Filter<JobDoc> = { state: 'dead' };
    if (query.kind !== undefined) filter.kind = checkName('kind', query.kind);
    if (query.after) {
      const { finishedAt, id } = query.after;
      filter.$or = [{ finishedAt: { $lt: finishedAt } }, { finishedAt, _id: { $lt: id } }];
    }
    const docs = await this.jobs.find(filter).sort(NEWEST_FIRST).limit(limit).toArray();
    return docs.map(toJob);
  }

  async replay(id: string, now = this.clock()): Promise<ReplayOutcome> {
    const dead = await this.jobs.findOne({ _id: id, state: 'dead' });
    if (!dead) return { outcome: 'not_dead' };
    const dedupe = dead.key === null ? {} : { dedupe: dedupeOf(dead.kind, dead.key) };
    try {
      const doc = await this.jobs.findOneAndUpdate(
        { _id: id, state: 'dead', generation: dead.generation },
        { $set: { state: 'available', attempts: 0, runAt: now, finishedAt: null, leaseExpiresAt: null, updatedAt: now, ...dedupe } },
        { returnDocument: 'after' },
      );
      return doc ? { outcome: 'replayed', job: toJob(doc) } : { outcome: 'not_dead' };
    } catch (err) {
      if (!isDuplicate(err) || dead.key === null) throw err;
      const live = await this.findLive(dead.kind, dead.key);
      if (!live) throw err;
      return { outcome: 'key_taken', live };
    }
  }

  async purgeDead(options: { ids?: readonly string[]; kind?: string; limit?: number }): Promise<number> {
    const limit = checkLimit(options.limit, MAX_LIST, 10_000);
    let ids: string[];
    if (options.ids) ids = options.ids.slice(0, limit);
    else {
      const filter: Filter<JobDoc> = { state: 'dead', ...(options.kind === undefined ? {} : { kind: checkName('kind', options.kind) }) };
      ids = (await this.jobs.find(filter, { projection: { _id: 1 } }).sort({ finishedAt: 1, _id: 1 }).limit(limit).toArray()).map((d) => d._id);
    }
    if (ids.length === 0) return 0;
    return (await this.jobs.deleteMany({ _id: { $in: ids }, state: 'dead' })).deletedCount;
  }

  async lastDead(kind: string, key: string): Promise<Job | null> {
    const [doc] = await this.jobs.find({ state: 'dead', kind, key }).sort({ finishedAt: -1, _id: -1 }).limit(1).toArray();
    return doc ? toJob(doc) : null;
  }

  async purgeNaming(needle: string, options: { except?: { kind: string; key: string }; after?: string | null; limit?: number }): Promise<{ purged: number; next: string | null }> {
    checkName('needle', needle);
    const limit = checkLimit(options.limit, MAX_LIST, 10_000);
    // A page by `_id` (its own index), then the jobs of it naming the needle, deleted by id.
    const page = await this.jobs.find({ _id: { $gt: options.after ?? '' } }).sort({ _id: 1 }).limit(limit).toArray();
    const doomed = page.filter((d) => !(d.kind === options.except?.kind && d.key === options.except.key) && [d.key, d.lock, d.holder, d.lastError, JSON.stringify(d.payload), JSON.stringify(d.progress)].some((t) => typeof t === 'string' && t.includes(needle)));
    const purged = doomed.length === 0 ? 0 : (await this.jobs.deleteMany({ _id: { $in: doomed.map((d) => d._id) } })).deletedCount;
    return { purged, next: page.length < limit ? null : page[page.length - 1]!._id };
  }

  async purgeExpired(options: { now?: number; limit?: number } = {}): Promise<number> {
    const now = options.now ?? this.clock();
    const limit = checkLimit(options.limit, MAX_LIST, 10_000);
    const due = await this.jobs.find({ expireAt: { $lte: new Date(now) } }, { projection: { _id: 1 } }).limit(limit).toArray();
    if (due.length === 0) return 0;
    return (await this.jobs.deleteMany({ _id: { $in: due.map((d) => d._id) }, expireAt: { $lte: new Date(now) } })).deletedCount;
  }

  async counts(): Promise<{ kind: string; state: JobState; count: number }[]> {
    const rows = await this.jobs
      .aggregate<{ _id: { kind: string; state: JobState }; count: number }>([{ $group: { _id: { kind: '$kind', state: '$state' }, count: { $sum: 1 } } }, { $sort: { '_id.kind': 1, '_id.state': 1 } }])
      .toArray();
    return rows.map((r) => ({ kind: r._id.kind, state: r._id.state, count: r.count }));
  }

  async close(): Promise<void> {
    await this.handle?.release();
  }

  /** A due candidate made running for the claimer; null when another process moved it first, 'locked' when its lock is held. */
  private async take(candidate: JobDoc, request: ClaimRequest, now: number): Promise<Claimed | null | 'locked'> {
    try {
      const doc = await this.jobs.findOneAndUpdate(
        { _id: candidate._id, state: 'available', generation: candidate.generation, runAt: { $lte: now } },
        {
          $set: { state: 'running', holder: request.holder, leaseExpiresAt: now + request.leaseMs, attemptedAt: now, updatedAt: now, ...(candidate.lock === null ? {} : { lockHeld: candidate.lock }) },
          $inc: { attempts: 1, generation: 1 },
        },
        { returnDocument: 'after' },
      );
      if (!doc) return null;
      const job = toJob(doc);
      return { job, lease: { jobId: job.id, holder: request.holder, generation: job.generation, expiresAt: job.leaseExpiresAt! } };
    } catch (err) {
      // Only the held-lock index can collide here: the job's own key is unchanged.
      if (isDuplicate(err) && candidate.lock !== null) return 'locked';
      throw err;
    }
  }

  /**
   * Running jobs of the claimed kinds whose lease expired go back to available (or to dead, their
   * attempts spent), one generation up, their lock released. Each is moved only if still as read,
   * still expired: a heartbeat that landed meanwhile keeps its holder. Only the claimed kinds: a
   * claimer never takes another kind's job from its holder.
   */
  private async takeOver(kinds: readonly string[], now: number): Promise<void> {
    const expired = await this.jobs.find({ state: 'running', leaseExpiresAt: { $lte: now }, kind: { $in: [...kinds] } }).sort({ leaseExpiresAt: 1, _id: 1 }).limit(TAKEOVER_BATCH).toArray();
    for (const doc of expired) {
      const lastError = `the lease of ${doc.holder} expired before it finished`;
      const update: UpdateFilter<JobDoc> =
        doc.attempts >= doc.maxAttempts
          ? this.finish('dead', now, { lastError })
          : { $set: { state: 'available', leaseExpiresAt: null, updatedAt: now, lastError }, $unset: { lockHeld: '' } };
      await this.jobs.updateOne({ _id: doc._id, state: 'running', generation: doc.generation, leaseExpiresAt: { $lte: now } }, { ...update, $inc: { generation: 1 } });
    }
  }

  /** A holder's write: only while the job runs under the generation the lease names. */
  private async fenced(lease: JobLease, update: UpdateFilter<JobDoc>): Promise<JobDoc> {
    const doc = await this.jobs.findOneAndUpdate(fenceOf(lease), update, { returnDocument: 'after' });
    if (!doc) throw new LostLeaseError(lease.jobId, lease.generation);
    return doc;
  }

  /** A job leaves the live states, its key and lock free again: completed and cancelled expire after the retention period. */
  private finish(state: 'completed' | 'dead' | 'cancelled', now: number, extra: Partial<JobDoc>): UpdateFilter<JobDoc> {
    const expiry: Document = state === 'dead' ? {} : { expireAt: new Date(now + this.retentionMs) };
    return { $set: { ...extra, ...expiry, state, finishedAt: now, leaseExpiresAt: null, updatedAt: now }, $unset: { dedupe: '', lockHeld: '' } };
  }

  /** The live job of a key, hurried when the new request wants it sooner or more urgently. */
  private async live(dedupe: string, job: Job, now: number): Promise<Job | null> {
    const hurried = await this.jobs.findOneAndUpdate(
      { dedupe, state: 'available', $or: [{ runAt: { $gt: job.runAt } }, { priority: { $gt: job.priority } }] },
      { $min: { runAt: job.runAt, priority: job.priority }, $set: { updatedAt: now } },
      { returnDocument: 'after' },
    );
    const doc = hurried ?? (await this.jobs.findOne({ dedupe }));
    return doc ? toJob(doc) : null;
  }
}

export function dedupeOf(kind: string, key: string): string {
  return `${checkName('kind', kind)}\u001f${checkName('key', key)}`;
}

/** Due jobs of a kind in claim order, leaving out those whose lock a running job holds. */
export function dueFilter(kind: string, now: number, held: ReadonlySet<string>): Filter<JobDoc> {
  return { kind, state: 'available', runAt: { $lte: now }, ...(held.size === 0 ? {} : { lock: { $nin: [...held] } }) };
}

export function fenceOf(lease: JobLease): Filter<JobDoc> {
  return { _id: lease.jobId, holder: lease.holder, generation: lease.generation, state: 'running' };
}

function isDuplicate(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === DUPLICATE_KEY;
}

type Lane = LaneCandidate & { doc: JobDoc };

function laneOf(doc: JobDoc): Lane {
  return { tenant: doc.laneTenant ?? '', user: doc.laneUser ?? '', priority: doc.priority, runAt: doc.runAt, id: doc._id, doc };
}

function toDoc(job: Job, dedupe: string | undefined): JobDoc {
  const { id, tenant, user, ...rest } = job;
  return { _id: id, ...rest, laneTenant: tenant ?? '', laneUser: user ?? '', ...(dedupe === undefined ? {} : { dedupe }) };
}

function toJob(doc: JobDoc): Job {
  return {
    id: doc._id, kind: doc.kind, key: doc.key, lock: doc.lock, state: doc.state, priority: doc.priority, runAt: doc.runAt,
    attempts: doc.attempts, maxAttempts: doc.maxAttempts, tenant: doc.laneTenant || null, user: doc.laneUser || null, holder: doc.holder, generation: doc.generation, leaseExpiresAt: doc.leaseExpiresAt,
    payload: doc.payload, progress: doc.progress, lastError: doc.lastError,
    createdAt: doc.createdAt, updatedAt: doc.updatedAt, attemptedAt: doc.attemptedAt, finishedAt: doc.finishedAt,
  };
}
