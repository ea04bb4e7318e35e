import type { EventStore } from '../eventstore/eventStore.js';
import type { ReadStore } from '../readstore/readStore.js';
import type { Projection } from './projection.js';

/**
 * The highest log position up to which every one of `projections` has applied every event of its
 * types, at most `upTo` (default: the head of the log). A projection none of whose events lies
 * between its checkpoint and that bound does not hold it back, however old its checkpoint: a
 * projection is only behind on events it reads. Only a live checkpoint counts (a rebuild's is not
 * what readers are served). One read of the checkpoints and, for each projection behind the bound,
 * one of the log: cheap enough for a request.
 */
export async function appliedThrough(eventStore: EventStore, readStore: ReadStore, projections: readonly Pick<Projection, 'name' | 'eventTypes'>[], upTo?: number): Promise<number> {
  let through = upTo ?? (await eventStore.headPosition());
  const checkpoints = new Map((await readStore.listCheckpoints()).map((cp) => [cp.projection, cp]));
  for (const p of projections) {
    const cp = checkpoints.get(p.name);
    const at = cp?.status === 'live' ? cp.position : 0;
    if (at >= through) continue;
    const [next] = await eventStore.readAll({ after: at, maxCount: 1, filter: { eventTypes: p.eventTypes } });
    if (next && next.globalPosition <= through) through = next.globalPosition - 1;
  }
  return through;
}
