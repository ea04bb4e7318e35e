import type { CollectionSpec, Doc, ReadStore } from '../readstore/readStore.js';
import type { TransientKind } from '../shared/transientErrors.js';

/**
 * Projections that cannot move on now (contracts §19), one document per projection, for
 * `projections status` (which runs in another process than the runners) and for the deletion
 * job, which must not call an erasure done while a projection is stopped before it:
 * - `waiting`: the store failed for a while (busy, full, unreachable, failing over); the batch is
 *   retried with back-off until it answers, nothing is skipped;
 * - `stopped`: an event that erases data (user.erased, provider_data.erased) failed on every
 *   attempt; such an event is never dead-lettered, so the projection stays on it and keeps trying.
 * Written by the runner on each back-off step (best effort: the store may be the one failing),
 * removed by the batch that moves it on.
 */
export const PROJECTION_STALLS = 'projection_stalls';

export const projectionStallsCollection: CollectionSpec = {
  name: PROJECTION_STALLS,
  indexes: [],
  columns: [],
  extendInPlace: true,
};

export type StallState = 'waiting' | 'stopped';

export type StallDoc = Doc & {
  projection: string;
  state: StallState;
  /** `waiting`: what failed (busy, full, io, network, failover); `stopped`: `erasure`. */
  kind: TransientKind | 'erasure';
  /** The checkpoint the projection stands at. */
  position: number;
  /** `stopped`: the erasure event it stopped on. */
  event_position: number | null;
  event_type: string | null;
  /** The error's first line, bounded (deadLetters.ts errorText). */
  error: string;
  since: string;
  /** Retries since the stall began. */
  retries: number;
  updated_at: string;
};

/** Stalls by projection, for every projection that has one. */
export async function listStalls(readStore: ReadStore): Promise<Map<string, StallDoc>> {
  const docs = await readStore.find<StallDoc>(PROJECTION_STALLS, { filter: {}, limit: 1000 });
  return new Map(docs.map((d) => [d.projection, d]));
}
