import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
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
    holder: `${config.leases.instanceId}/${role}/${hostname()}:${process.pid}/${randomUUID().slice(0, 8)}`,
    leaseMs: config.leases.leaseMs,
    renewMs: config.leases.renewMs,
    isGone: processGone,
  };
}

/**
 * A holder that was a process of this machine which no longer exists: its leases need not run
 * out (a restart after a crash resumes the work at once). A process that exists, or one of another
 * machine, is never taken for gone. Holders name their host and process id (above).
 */
export function processGone(holder: string): boolean {
  const origin = /\/([^/]+):(\d+)\/[^/]+$/.exec(holder);
  if (!origin || origin[1] !== hostname()) return false;
  const pid = Number(origin[2]);
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The work queue's holder name of this process: instance, host and process id, so an operator sees who runs a job. */
export function jobHolderOf(config: Config): string {
  return `${config.leases.instanceId}/jobs/${hostname()}:${process.pid}/${randomUUID().slice(0, 8)}`;
}
