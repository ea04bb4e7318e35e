/**
 * Leases: which process does a piece of background work (a projection, a reactor, the webhook
 * engine, an ETL job) while several service processes share one store. A lease is held by one
 * holder until it expires; the holder renews it well before that. Every acquisition by a new
 * holder (or after an expiry) raises the lease's generation, which is the fencing token: a write
 * that carries a generation other than the stored one is refused (see `Fence`), so a holder that
 * lost its lease without noticing (a long pause) can never write after its successor.
 *
 * Times are the caller's wall clock in milliseconds; processes of one deployment are assumed to
 * agree on the time to well within a lease (docs/architecture.md "Several service processes").
 */
export type Lease = {
  name: string;
  holder: string;
  /** Fencing token: raised by every acquisition that does not continue the holder's own unexpired lease. */
  generation: number;
  /** Epoch milliseconds. */
  expiresAt: number;
};

/** Carried by a fenced write: refused unless the lease still has this generation. */
export type Fence = { lease: string; generation: number };

export interface LeaseStore {
  /**
   * Takes the lease when it is free, expired or already held by `holder` (then renewing it).
   * Answers the lease as now stored, or null when another holder has it.
   */
  acquire(name: string, holder: string, ttlMs: number, now?: number): Promise<Lease | null>;
  /** Extends a held lease; null when it was lost (taken by another holder, hence another generation). */
  renew(lease: Lease, ttlMs: number, now?: number): Promise<Lease | null>;
  /** Gives a held lease up at once (its generation stays, so the next holder's is higher). */
  release(lease: Lease): Promise<void>;
  /** Forgets a lease altogether (a finished job's), if `lease` still holds it. */
  remove(lease: Lease): Promise<void>;
  get(name: string): Promise<Lease | null>;
}

export class LeaseLostError extends Error {
  readonly code = 'LEASE_LOST';
  constructor(readonly lease: string, readonly generation: number, readonly stored: number | null) {
    super(`lease ${lease}: generation ${generation} no longer holds it (stored ${stored ?? 'none'})`);
    this.name = 'LeaseLostError';
  }
}
