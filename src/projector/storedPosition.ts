import type { ReadStore } from '../readstore/readStore.js';

/**
 * A projection's position as stored, for a wait in a process that may not be the one applying it
 * (several service processes, leases): only a live checkpoint counts, a rebuild's is not served.
 */
export const storedPosition =
  (readStore: ReadStore, name: string) =>
  async (): Promise<number> => {
    const cp = await readStore.getCheckpoint(name);
    return cp?.status === 'live' ? cp.position : 0;
  };
