import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { projections } from '../../projections/index.js';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { ProjectorRuntime } from '../../src/projector/projectorRuntime.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../support/tmp.js';
import { DEFAULT_TOTAL, eventsPath, plan, readModelsPath, type PlannedBatch } from './appendWorker.js';

/**
 * Issue acceptance: "a child process appends 100k events while projecting, is killed with
 * SIGKILL part-way, restarts, and shows every acknowledged append present exactly once and the
 * projections equal to a clean rebuild."
 *
 * CRASH_SEED=<n> replays a given run (batch sizes, ids and kill threshold all derive from it).
 */
const WORKER = fileURLToPath(new URL('./appendWorker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TOTAL = DEFAULT_TOTAL;

type Ack = { tag: 'A' | 'R'; batch: number; lastPosition: number; replayed: boolean; ids: string[] };
type WorkerRun = { code: number | null; signal: NodeJS.Signals | null; acks: Ack[]; doneHead: number | null; stderr: string };

function runWorker(env: Record<string, string>, onAck?: (ack: Ack, kill: () => void) => void): Promise<WorkerRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const acks: Ack[] = [];
  let doneHead: number | null = null;
  let stderr = '';
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    const [tag, ...rest] = line.split(' ');
    if (tag === 'DONE') {
      doneHead = Number(rest[0]);
      return;
    }
    if (tag !== 'A' && tag !== 'R') throw new Error(`unexpected worker output: ${line}`);
    const ack: Ack = { tag, batch: Number(rest[0]), lastPosition: Number(rest[1]), replayed: rest[2] === '1', ids: rest[3]!.split(',') };
    acks.push(ack);
    onAck?.(ack, kill);
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    // 'close' fires after stdout is drained: every line written before the kill has been read.
    child.on('close', (code, signal) => resolve({ code, signal, acks, doneHead, stderr }));
  });
}

async function readEverything(store: SqliteEventStore): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  let after = 0;
  for (;;) {
    const page = await store.readAll({ after, maxCount: 10_000 });
    if (page.length === 0) return all;
    all.push(...page);
    after = page[page.length - 1]!.globalPosition;
  }
}

/** Every collection of every projection, sorted by _id, as one JSON line per document. */
async function dumpProjections(readStore: ReadStore): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const p of projections) {
    for (const c of p.collections) {
      const docs = await readStore.find(c.name, { sort: [['_id', 1]] });
      out.set(`${p.name}/${c.name}`, docs.map((d) => JSON.stringify(d)));
    }
  }
  return out;
}

function describeDiff(live: string[], rebuilt: string[]): string {
  const n = Math.max(live.length, rebuilt.length);
  for (let i = 0; i < n; i++) if (live[i] !== rebuilt[i]) return `counts ${live.length}/${rebuilt.length}; first difference at #${i}: live ${live[i]} vs rebuilt ${rebuilt[i]}`;
  return 'equal';
}

const digest = (lines: string[]) => createHash('sha256').update(lines.join('\n')).digest('hex');

describe('crash recovery (embedded SQLite)', () => {
  it('keeps every acknowledged append exactly once across SIGKILL, and projections equal a clean rebuild', { timeout: 180_000 }, async () => {
    const seed = process.env.CRASH_SEED ? Number(process.env.CRASH_SEED) : Math.floor(Math.random() * 2 ** 31);
    const dir = tempDir('wellstream-crash-');
    const batches = plan(seed, TOTAL);
    const threshold = 30_000 + (seed % 20_001);
    const context = `seed ${seed}, kill after >= ${threshold} acknowledged events, dir ${dir}`;
    console.log(`[crash] ${context}`);
    const env = { DATA_DIR: dir, CRASH_SEED: String(seed), CRASH_TOTAL: String(TOTAL) };

    // Phase 1: append while projecting, SIGKILL part-way.
    let ackedEvents = 0;
    const t0 = Date.now();
    const first = await runWorker({ ...env, CRASH_MODE: 'run' }, (ack, kill) => {
      ackedEvents += ack.ids.length;
      if (ackedEvents >= threshold) kill();
    });
    expect(first.signal, `${context}\n${first.stderr}`).toBe('SIGKILL');
    const acked1 = first.acks;
    expect(ackedEvents).toBeGreaterThanOrEqual(threshold);
    expect(ackedEvents).toBeLessThan(TOTAL);
    // Acks are sequential batches 0..N, written fresh, with the planned ids.
    const badAcks = acked1.filter((a, i) => a.tag !== 'A' || a.batch !== i || a.replayed || a.ids.join() !== batches[i]!.events.map((e) => e.id).join());
    expect(badAcks, 'acks out of plan').toEqual([]);
    const lastAcked = acked1.length - 1;
    console.log(`[crash] killed after ${ackedEvents} acknowledged events (${acked1.length} appends) in ${Date.now() - t0} ms`);

    // Right after the crash, before any resend: acknowledged appends survived, the in-flight one is all or nothing.
    let inFlightStored: boolean;
    {
      const es = new SqliteEventStore({ path: eventsPath(dir) });
      const rs = new SqliteReadStore({ path: readModelsPath(dir) });
      try {
        const stored = await readEverything(es);
        const position = new Map(stored.map((e) => [e.id, e.globalPosition]));
        const lost = acked1.flatMap((a) => a.ids.filter((id) => !position.has(id)));
        expect(lost, 'acknowledged events lost in the crash').toEqual([]);
        const moved = acked1.filter((a) => position.get(a.ids[a.ids.length - 1]!) !== a.lastPosition);
        expect(moved, 'acknowledged appends not at their acknowledged position').toEqual([]);
        const inFlight: PlannedBatch | undefined = batches[lastAcked + 1];
        const inFlightCount = inFlight ? inFlight.events.filter((e) => position.has(e.id)).length : 0;
        expect([0, inFlight?.events.length ?? 0]).toContain(inFlightCount);
        inFlightStored = inFlightCount > 0;
        expect(stored.length).toBe(ackedEvents + inFlightCount);
        const users = await rs.getCheckpoint('users');
        // The runners were projecting when the kill landed, and never ahead of the log.
        expect(users?.position ?? 0).toBeGreaterThan(0);
        expect(users!.position).toBeLessThanOrEqual(await es.headPosition());
        console.log(`[crash] after the kill: ${stored.length} events stored (in-flight batch ${inFlightStored ? 'committed' : 'not committed'}), users checkpoint ${users!.position}`);
      } finally {
        await es.close();
        await rs.close();
      }
    }

    // Phase 2: restart, re-send the last acknowledged and the first unacknowledged batch, finish, project.
    const t1 = Date.now();
    const second = await runWorker({ ...env, CRASH_MODE: 'finish', CRASH_RESEND_FROM: String(lastAcked) });
    expect(second.code, `${context}\n${second.stderr}`).toBe(0);
    expect(second.doneHead).not.toBeNull();
    const resent = second.acks.filter((a) => a.tag === 'R');
    expect(resent.map((a) => a.batch)).toEqual([lastAcked, lastAcked + 1].filter((b) => b < batches.length));
    expect(resent[0]!.replayed).toBe(true);
    expect(resent[0]!.lastPosition).toBe(acked1[lastAcked]!.lastPosition);
    if (resent[1]) expect(resent[1].replayed).toBe(inFlightStored);
    const rest = second.acks.filter((a) => a.tag === 'A');
    expect(rest.filter((a, i) => a.batch !== lastAcked + 2 + i || a.replayed), 'remainder appends out of plan or replayed').toEqual([]);
    expect(lastAcked + 2 + rest.length).toBe(Math.max(batches.length, lastAcked + 2));
    console.log(`[crash] restart finished and projected in ${Date.now() - t1} ms`);

    // Final state of the log.
    const t3 = Date.now();
    const es = new SqliteEventStore({ path: eventsPath(dir) });
    const live = new SqliteReadStore({ path: readModelsPath(dir) });
    const rebuilt = new SqliteReadStore({ path: join(dir, 'rebuild.sqlite') });
    try {
      const stored = await readEverything(es);
      const count = new Map<string, number>();
      for (const e of stored) count.set(e.id, (count.get(e.id) ?? 0) + 1);
      const duplicates = [...count].filter(([, n]) => n > 1);
      expect(duplicates, 'event ids stored more than once').toEqual([]);
      expect(stored.length).toBe(TOTAL);
      expect(second.doneHead).toBe(stored[stored.length - 1]!.globalPosition);

      // Exactly the plan: the right ids, in their streams at their revisions, and nothing else.
      const planned = batches.flatMap((b) => b.events.map((e, revision) => ({ id: e.id, stream: b.stream, revision, userId: e.data.user_id })));
      const byId = new Map(stored.map((e) => [e.id, e]));
      const offPlan = planned.filter((p) => {
        const e = byId.get(p.id);
        return !e || e.streamName !== p.stream || e.streamRevision !== p.revision || e.type !== 'user.registered' || e.data.user_id !== p.userId;
      });
      expect(offPlan.slice(0, 5), `${offPlan.length} planned events missing or not as planned`).toEqual([]);
      // Every acknowledged append, from either run, is present exactly once at the position it was acknowledged with.
      const allAcks = [...acked1, ...second.acks];
      const notOnce = allAcks.flatMap((a) => a.ids.filter((id) => count.get(id) !== 1));
      expect(notOnce, 'acknowledged events not stored exactly once').toEqual([]);
      const movedAcks = allAcks.filter((a) => byId.get(a.ids[a.ids.length - 1]!)?.globalPosition !== a.lastPosition);
      expect(movedAcks.slice(0, 5), 'acknowledged appends not at their acknowledged position').toEqual([]);

      // The users read model: exactly one document per registered user.
      const userIds = planned.map((p) => p.userId).sort();
      expect(new Set(userIds).size).toBe(TOTAL);
      expect(await live.count('users')).toBe(TOTAL);
      const liveDump = await dumpProjections(live);
      expect(liveDump.get('users/users')!.map((d) => (JSON.parse(d) as { _id: string })._id)).toEqual(userIds);

      // Projections equal a clean rebuild from the same log into a fresh read store.
      const t2 = Date.now();
      await new ProjectorRuntime(es, rebuilt, projections).rebuild(undefined);
      const rebuiltDump = await dumpProjections(rebuilt);
      console.log(`[crash] clean rebuild in ${Date.now() - t2} ms (verification so far ${t2 - t3} ms)`);
      expect([...rebuiltDump.keys()]).toEqual([...liveDump.keys()]);
      for (const [name, docs] of liveDump) {
        const other = rebuiltDump.get(name)!;
        expect(digest(docs) === digest(other), `${name}: ${describeDiff(docs, other)}`).toBe(true);
      }
      for (const p of projections) {
        expect((await live.getCheckpoint(p.name))?.position ?? 0, `${p.name} checkpoint`).toBe((await rebuilt.getCheckpoint(p.name))?.position ?? 0);
      }
    } finally {
      await es.close();
      await live.close();
      await rebuilt.close();
    }
  });
});
