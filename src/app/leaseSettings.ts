import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import type { LeaseSettings } from '../projector/leaseKeeper.js';
import type { ReadStore } from '../readstore/readStore.js';

/**
 * The lease settings of one holder in this process (the main thread, the projector thread): the
 * instance id with a suffix of its own, so that a restart, or another thread, is never taken for
 * the holder of a lease it did not take. Undefined when the read store keeps no leases.
 */
export function leaseSettingsOf(config: Config, readStore: ReadStore, role: string): LeaseSettings | undefined {
  if (!readStore.leases) return undefined;
  return {
    store: readStore.leases(),
    holder: `${config.leases.instanceId}/${role}/${randomUUID().slice(0, 8)}`,
    leaseMs: config.leases.leaseMs,
    renewMs: config.leases.renewMs,
  };
}
