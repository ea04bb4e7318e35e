/**
 * Child process of test/crash/crashRecovery.test.ts. Opens the embedded stores in DATA_DIR (the
 * event store as the service opens it, its writes on a writer thread), runs
 * the real projections, and appends a deterministic plan of `user.registered` events.
 *
 * Protocol: one line on stdout per acknowledged append, written with a synchronous write(2)
 * right after the append's promise resolved, so a line the parent reads is an append that was
 * acknowledged, and at most the one append in flight can be stored without a line.
 *   A <batch> <lastPosition> <replayed 0|1> <id>,<id>,...   an append (run mode, or the remainder)
 *   R <batch> <lastPosition> <replayed 0|1> <id>,<id>,...   a re-sent batch (finish mode)
 *   DONE <headPosition>                                     finish mode: all appended and projected
 *
 * Environment: DATA_DIR, CRASH_SEED, CRASH_MODE (run | finish), CRASH_RESEND_FROM (finish mode:
 * the last batch the parent saw acknowledged, -1 for none), CRASH_TOTAL (default 100000).
 */
import { writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { UserRegistered } from '../../commands/users/user.js';
import { userStream } from '../../commands/users/user.js';
import { projections } from '../../projections/index.js';
import { createLogger } from '../../src/app/logger.js';
import { ThreadedSqliteEventStore } from '../../src/eventstore/threadedSqliteEventStore.js';
import { ProjectorRuntime } from '../../src/projector/projectorRuntime.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { deterministicId } from '../../src/shared/ids.js';
import { mulberry32 } from '../../src/shared/seededRandom.js';

export const DEFAULT_TOTAL = 100_000;
export const MAX_BATCH = 50;
const TENANTS = 10;
const BASE_TIME = Date.parse('2026-01-01T00:00:00.000Z');

export type PlannedBatch = { index: number; stream: string; events: (UserRegistered & { id: string })[] };

export const eventsPath = (dataDir: string) => join(dataDir, 'events.sqlite');
export const readModelsPath = (dataDir: string) => join(dataDir, 'readmodels.sqlite');

/**
 * The whole run, batch by batch: `total` user.registered events with client-supplied
 * (deterministic) event ids, in batches of 1..50 events. The port appends to one stream at a
 * time, so a batch is one new stream `user-<id of its first user>` written with `no_stream`.
 */
export function plan(seed: number, total = DEFAULT_TOTAL): PlannedBatch[] {
  const rnd = mulberry32(seed);
  const tenants = Array.from({ length: TENANTS }, (_, t) => deterministicId('crash', String(seed), 'tenant', String(t)));
  const batches: PlannedBatch[] = [];
  let i = 0;
  while (i < total) {
    const size = Math.min(total - i, 1 + Math.floor(rnd() * MAX_BATCH));
    const events: PlannedBatch['events'] = [];
    for (let k = 0; k < size; k++, i++) {
      const userId = deterministicId('crash', String(seed), 'user', String(i));
      events.push({
        id: deterministicId('crash', String(seed), 'event', String(i)),
        type: 'user.registered',
        data: {
          user_id: userId,
          tenant_id: tenants[i % TENANTS]!,
          external_ref: i % 3 === 0 ? null : `ext-${i}`,
          created_at: new Date(BASE_TIME + i * 1000).toISOString(),
        },
      });
    }
    batches.push({ index: batches.length, stream: userStream(events[0]!.data.user_id), events });
  }
  return batches;
}

/** write(2) on fd 1, retried on EAGAIN (the pipe may be non-blocking) until every byte is out. */
function writeLine(line: string): void {
  let buf = Buffer.from(line + '\n');
  while (buf.length > 0) {
    try {
      const n = writeSync(1, buf);
      buf = buf.subarray(n);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

async function main(): Promise<void> {
  const dataDir = process.env.DATA_DIR;
  if (!dataDir) throw new Error('DATA_DIR is required');
  const seed = Number(process.env.CRASH_SEED);
  if (!Number.isInteger(seed)) throw new Error('CRASH_SEED must be an integer');
  const mode = process.env.CRASH_MODE ?? 'run';
  const total = Number(process.env.CRASH_TOTAL ?? DEFAULT_TOTAL);
  const batches = plan(seed, total);

  const log = createLogger('warn', pino.destination(2));
  // The service's store: appends committed on its writer thread, acknowledged here once durable (issue 37).
  const eventStore = await ThreadedSqliteEventStore.open({ path: eventsPath(dataDir), pollIntervalMs: 50 });
  const readStore = new SqliteReadStore({ path: readModelsPath(dataDir) });
  const projectors = new ProjectorRuntime(eventStore, readStore, projections, log);
  await projectors.start();

  const append = async (tag: 'A' | 'R', b: PlannedBatch) => {
    const r = await eventStore.appendToStream(b.stream, b.events, { expectedRevision: 'no_stream' });
    writeLine(`${tag} ${b.index} ${r.lastPosition} ${r.replayed ? 1 : 0} ${b.events.map((e) => e.id).join(',')}`);
    // Lets the projection runners (same thread) work between appends: projecting while appending.
    await yieldToLoop();
  };

  let next = 0;
  if (mode === 'finish') {
    const from = Number(process.env.CRASH_RESEND_FROM ?? '-1');
    // The last acknowledged batch (must be answered as a replay) and the first unacknowledged one
    // (stored or not, depending on where the kill landed): same ids, nothing may be stored twice.
    for (const b of [from, from + 1]) if (b >= 0 && b < batches.length) await append('R', batches[b]!);
    next = from + 2;
  } else if (mode !== 'run') {
    throw new Error(`unknown CRASH_MODE ${mode}`);
  }
  for (let b = Math.max(0, next); b < batches.length; b++) await append('A', batches[b]!);

  const head = await eventStore.headPosition();
  await projectors.waitForIdle(head, 120_000);
  await projectors.stop();
  await eventStore.close();
  await readStore.close();
  writeLine(`DONE ${head}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`appendWorker failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
