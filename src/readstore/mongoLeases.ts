import { MongoServerError, type Collection, type Db, type Document } from 'mongodb';
import { LeaseLostError, type Fence, type Lease, type LeaseStore } from './leases.js';

type LeaseDoc = { _id: string; holder: string; generation: number; expiresAt: number };

const LEASES = '_leases';
const CHECKPOINTS = '_checkpoints';
const DUPLICATE_KEY = 11000;

/**
 * Leases on MongoDB, one document each in `_leases`. Every change is one `findOneAndUpdate`
 * whose filter is the condition (free, expired or ours; or exactly our holding), so concurrent
 * processes are serialised by the server's per-document atomicity. A lease that does not exist
 * yet is created by an upsert; two processes creating it at once collide on `_id` and the loser
 * reads it as taken.
 *
 * Fencing: a projection's batch cannot be one transaction on a standalone server, so its
 * checkpoint document carries `fence`, the highest lease generation that ever wrote it
 * (`fenceClaim`). Taking a lease raises the fence of the checkpoint of the same name at once, so
 * a holder that lost the lease is refused at its next claim or advance, even before its
 * successor writes anything.
 */
export class MongoLeases implements LeaseStore {
  private readonly leases: Collection<LeaseDoc>;
  private readonly checkpoints: Collection<{ _id: string; fence?: number }>;

  constructor(db: Db) {
    this.leases = db.collection<LeaseDoc>(LEASES);
    this.checkpoints = db.collection<{ _id: string; fence?: number }>(CHECKPOINTS);
  }

  async acquire(name: string, holder: string, ttlMs: number, now = Date.now()): Promise<Lease | null> {
    // Ours and unexpired: extend, same generation.
    const own = await this.leases.findOneAndUpdate({ _id: name, holder, expiresAt: { $gt: now } }, { $set: { expiresAt: now + ttlMs } }, { returnDocument: 'after' });
    if (own) return toLease(own);
    try {
      // Free (expired) or never held: a new holding, one generation up.
      const taken = await this.leases.findOneAndUpdate(
        { _id: name, expiresAt: { $lte: now } },
        { $set: { holder, expiresAt: now + ttlMs }, $inc: { generation: 1 } },
        { upsert: true, returnDocument: 'after' },
      );
      if (!taken) return null;
      await this.checkpoints.updateOne({ _id: name }, { $max: { fence: taken.generation } });
      return toLease(taken);
    } catch (err) {
      // The upsert met a lease someone else holds (its expiresAt did not match): taken.
      if (err instanceof MongoServerError && err.code === DUPLICATE_KEY) return null;
      throw err;
    }
  }

  async renew(lease: Lease, ttlMs: number, now = Date.now()): Promise<Lease | null> {
    const doc = await this.leases.findOneAndUpdate(
      { _id: lease.name, holder: lease.holder, generation: lease.generation },
      { $max: { expiresAt: now + ttlMs } },
      { returnDocument: 'after' },
    );
    return doc ? toLease(doc) : null;
  }

  async release(lease: Lease): Promise<void> {
    await this.leases.updateOne({ _id: lease.name, holder: lease.holder, generation: lease.generation }, { $set: { expiresAt: 0 } });
  }

  async remove(lease: Lease): Promise<void> {
    await this.leases.deleteOne({ _id: lease.name, holder: lease.holder, generation: lease.generation });
  }

  async get(name: string): Promise<Lease | null> {
    const doc = await this.leases.findOne({ _id: name });
    return doc ? toLease(doc) : null;
  }
}

/**
 * What a fenced batch adds to its checkpoint claim on MongoDB: the filter refuses it once a
 * later generation has written (or taken the lease), the update records its own generation.
 */
export function fenceClaim(fence: Fence | undefined): { filter: Document; update: Document } {
  if (!fence) return { filter: {}, update: {} };
  return {
    filter: { $or: [{ fence: { $exists: false } }, { fence: { $lte: fence.generation } }] },
    update: { $max: { fence: fence.generation } },
  };
}

/** The advance of a fenced batch holds only while no later generation raised the fence. */
export function fenceHeld(fence: Fence | undefined): Document {
  return fence ? { fence: fence.generation } : {};
}

function toLease(doc: LeaseDoc): Lease {
  return { name: doc._id, holder: doc.holder, generation: doc.generation, expiresAt: doc.expiresAt };
}

/**
 * Refuses a fenced write outside a projection batch (the webhook engine's outcomes) once the lease
 * has another generation. A read, not part of the write: it narrows a lost holder's window to one
 * round trip, where the embedded store closes it (docs/webhooks.md "Several processes").
 */
export async function assertLeaseHeld(db: Db, fence: Fence): Promise<void> {
  const doc = await db.collection<LeaseDoc>(LEASES).findOne({ _id: fence.lease }, { projection: { generation: 1 } });
  if (doc?.generation !== fence.generation) throw new LeaseLostError(fence.lease, fence.generation, doc?.generation ?? null);
}
