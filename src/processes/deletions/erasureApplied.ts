import { deletionStream } from '../../../commands/deletions/deletionJob.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import { DEAD_LETTERS, type DeadLetterDoc } from '../../projector/deadLetters.js';
import { PROJECTION_STALLS, type StallDoc } from '../../projector/projectionStalls.js';
import type { ReadStore } from '../../readstore/readStore.js';

/**
 * The erasure is not (yet) true of every read model (contracts §19): a projection stopped before
 * the job's erasure event, or a dead letter holds one of the job's events. The job is not failed
 * and not done: it waits and looks again (deletionJobRunner.ts).
 */
export class ErasureNotApplied extends Error {
  override name = 'ErasureNotApplied';
}

/** How often a wait for the read models looks for a projection that stopped (it would never get there on its own). */
const LOOK_EVERY_MS = 1000;
/** A reason is kept in the queue job's progress (16 KiB at most): the first projections' say it. */
const MAX_REASON_CHARS = 2000;
const bounded = (text: string) => (text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS - 1)}…` : text);

/**
 * Resolves once every projection has applied the log up to `position` (default: its head) and no
 * open dead letter holds an event of the job's stream (its user.erased / provider_data.erased):
 * only then have the read models really dropped what the job erases. Throws ErasureNotApplied, at
 * once, when a projection is stalled before `position`: stopped on an event that failed on every
 * attempt (never skipped), or waiting on its failing store (projectionStalls.ts), either of which
 * may last longer than the attempt's deadline; or when such a dead letter exists (one left by an
 * earlier version, which skipped erasure events too).
 */
export async function settleErasure(o: {
  eventStore: EventStore;
  readStore: ReadStore;
  jobId: string;
  position: number | undefined;
  settle: (position: number, timeoutMs: number) => Promise<void>;
  deadline: number;
}): Promise<void> {
  const target = o.position ?? (await o.eventStore.headPosition());
  let settled = false;
  const waiting = o.settle(target, Math.max(1, o.deadline - Date.now())).then(() => void (settled = true));
  // The wait is left to run out on its own when a stop ends this one: its rejection is not news.
  waiting.catch(() => {});
  while (!settled) {
    const stopped = await stalledBefore(o.readStore, target);
    if (stopped) throw new ErasureNotApplied(stopped);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([waiting, new Promise((r) => (timer = setTimeout(r, LOOK_EVERY_MS)))]).finally(() => clearTimeout(timer));
  }
  const held = await deadLettered(o.readStore, o.jobId);
  if (held) throw new ErasureNotApplied(held);
}

async function stalledBefore(readStore: ReadStore, position: number): Promise<string | null> {
  const stalls = await readStore.find<StallDoc>(PROJECTION_STALLS, { filter: {}, limit: 100 });
  const blocking: StallDoc[] = [];
  for (const s of stalls) {
    // The stored checkpoint is the truth: a stall left by a process that ended is not in the way once it passed.
    if (s.position < position && ((await readStore.getCheckpoint(s.projection))?.position ?? 0) < position) blocking.push(s);
  }
  if (!blocking.length) return null;
  const why = (s: StallDoc) => (s.state === 'stopped' ? `${s.projection} stopped on ${s.event_type}@${s.event_position}` : `${s.projection} waiting on its store (${s.kind})`);
  return bounded(`waiting for the read models: ${blocking.map((s) => `${why(s)} since ${s.since} (${s.error})`).join('; ')}`);
}

async function deadLettered(readStore: ReadStore, jobId: string): Promise<string | null> {
  const letters = await readStore.find<DeadLetterDoc>(DEAD_LETTERS, { filter: { status: 'open', stream: deletionStream(jobId) }, limit: 100 });
  if (!letters.length) return null;
  return bounded(`the read models skipped this job's erasure: dead letters ${letters.map((d) => d._id).join(', ')} are open (npm run cli -- projections replay-dead-letter <id>)`);
}
