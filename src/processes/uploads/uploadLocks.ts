import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Lease, LeaseStore } from '../../readstore/leases.js';

/**
 * Locks on resumable uploads (contracts §13/§18, issue 34 §6), held in the read store's leases so
 * that every service process sharing one DATA_DIR (and its staging) sees them: a PATCH, a DELETE,
 * the acceptance of a complete upload and the sweep's expiry each hold the upload's lock while they
 * change it, so none of them meets the others half-way. HEAD takes none (it only reads what is
 * durably staged). Each holding has a holder name of its own (instance, host, process, a random
 * suffix): two requests of one process are as distinct as two of different processes.
 *
 * A lock expires after `leaseMs` unless renewed; a PATCH renews it every `renewMs` while its body
 * streams, so a holder that stalls or crashes frees the upload within `leaseMs`. A holder that
 * finds its renewal refused (it stalled past the expiry and another took the lock) is told through
 * `signal` and stops writing before its next chunk.
 */
export type UploadLockSettings = { leaseMs: number; renewMs: number; instanceId: string };

/** The lease name of one upload's lock (its stream names the user, provider, Upload-Id and generation). */
export const uploadLockName = (stream: string) => `tus:${stream}`;

/** The lock of a tenant's creations: counting its quotas and creating are one step across processes. */
export const creationLockName = (tenantId: string) => `tus-create:${tenantId}`;

export class UploadLockLostError extends Error {
  constructor(name: string) {
    super(`the lock ${name} was lost: this request stalled longer than the lease and another took the upload`);
    this.name = 'UploadLockLostError';
  }
}

export type UploadLock = {
  /** Aborted once a renewal finds the lock taken by another holder. */
  readonly signal: AbortSignal;
  /** Renews at once; throws UploadLockLostError when the lock is no longer this holder's. */
  confirm(): Promise<void>;
  /** Stops renewing and removes the lease (no row is left behind per upload). */
  release(): Promise<void>;
};

export class UploadLocks {
  constructor(
    private readonly store: LeaseStore,
    private readonly settings: UploadLockSettings,
  ) {}

  private holder(): string {
    return `${this.settings.instanceId}/tus/${hostname()}:${process.pid}/${randomUUID().slice(0, 8)}`;
  }

  /** Takes the lock named `name` when free or expired, renewing it until released; null while another holds it. */
  async take(name: string): Promise<UploadLock | null> {
    const lease = await this.store.acquire(name, this.holder(), this.settings.leaseMs);
    return lease ? this.hold(lease) : null;
  }

  /**
   * Takes the lock, waiting for a holder to release it; gives up (null) after `leaseMs` and a
   * renewal period, by which time a holder that crashed has lost it: the wait is bounded by the
   * settings, never by the caller.
   */
  async wait(name: string): Promise<UploadLock | null> {
    const holder = this.holder();
    const deadline = Date.now() + this.settings.leaseMs + this.settings.renewMs;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      const lease = await this.store.acquire(name, holder, this.settings.leaseMs);
      if (lease) return this.hold(lease);
      if (Date.now() >= deadline) return null;
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  private hold(first: Lease): UploadLock {
    const { store, settings } = this;
    const lost = new AbortController();
    let lease: Lease | null = first;
    let renewing: Promise<void> = Promise.resolve();
    const renew = async () => {
      if (!lease) return;
      const renewed = await store.renew(lease, settings.leaseMs).catch(() => lease);
      if (renewed) lease = renewed;
      else {
        lease = null;
        lost.abort(new UploadLockLostError(first.name));
      }
    };
    const timer = setInterval(() => {
      renewing = renewing.then(renew);
    }, settings.renewMs);
    timer.unref();
    return {
      signal: lost.signal,
      async confirm() {
        renewing = renewing.then(renew);
        await renewing;
        if (!lease) throw new UploadLockLostError(first.name);
      },
      async release() {
        clearInterval(timer);
        await renewing;
        if (lease) await store.remove(lease);
        lease = null;
      },
    };
  }
}

/** The locks on the read store's leases; both adapters keep leases, a store without them cannot serve resumable uploads. */
export function uploadLocksOf(readStore: { leases?(): LeaseStore }, settings: UploadLockSettings): UploadLocks {
  if (!readStore.leases) throw new Error('resumable uploads need a read store that keeps leases (their locks)');
  return new UploadLocks(readStore.leases(), settings);
}
