import { readdirSync, readFileSync } from 'node:fs';

/**
 * Bytes written so far, from /proc's `io`: `wchar` passed to write calls (any file, pipe or
 * socket), `writeBytes` of file pages the thread dirtied (what goes to the disk, before
 * overwrites in the page cache merge).
 */
type Io = { wchar: number; writeBytes: number };

/** One thread's name (comm), CPU time so far (user + system, ms), start (ms after the process's) and bytes written. */
type ThreadCpu = { name: string; ms: number; startMs: number; io: Io | null };

/** CPU time (user + system) so far of a process (all threads, ended ones included) and of each of its live threads, from /proc; bytes written likewise. */
export type ProcessCpu = { pid: number; totalMs: number; ageMs: number; threads: Map<number, ThreadCpu>; io: Io | null };

export function readIo(path: string): Io | null {
  try {
    const f = Object.fromEntries(readFileSync(path, 'utf8').trim().split('\n').map((l) => l.split(': ') as [string, string]));
    return { wchar: Number(f.wchar), writeBytes: Number(f.write_bytes) };
  } catch {
    return null;
  }
}

// /proc/<pid>/stat after the command name: utime and stime are fields 14 and 15 (11 and 12 here),
// starttime field 22 (19 here), all in clock ticks of 10 ms (USER_HZ is 100 on Linux).
const TICK_MS = 10;
const statFields = (path: string) => readFileSync(path, 'utf8').split(') ')[1]!.split(' ').map(Number);

/** CPU time (user + system, all threads) a process or thread has used so far, in ms, from its /proc stat file. */
export const statCpuMs = (path: string) => {
  const f = statFields(path);
  return (f[11]! + f[12]!) * TICK_MS;
};

/** The process's CPU now, per thread, and its age (ms since it started) (/proc/<pid>/task/<tid>/stat and comm); null off Linux or once it ended. */
export function processCpu(pid: number | undefined): ProcessCpu | null {
  if (pid === undefined) return null;
  try {
    const start = statFields(`/proc/${pid}/stat`)[19]!;
    const threads = new Map<number, ThreadCpu>();
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const f = statFields(`/proc/${pid}/task/${tid}/stat`);
        threads.set(Number(tid), { name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), ms: (f[11]! + f[12]!) * TICK_MS, startMs: (f[19]! - start) * TICK_MS, io: readIo(`/proc/${pid}/task/${tid}/io`) });
      } catch {
        /* the thread ended between the listing and the read: the process total still counts it */
      }
    }
    const ageMs = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000 - start * TICK_MS;
    return { pid, totalMs: statCpuMs(`/proc/${pid}/stat`), ageMs, threads, io: readIo(`/proc/${pid}/io`) };
  } catch {
    return null;
  }
}

/** Added to an id Linux reused (pid_max is at most 2^22). */
const REUSED_TID = 2 ** 22;

/**
 * `now` with the last reading of every thread `seen` had and `now` has not (a thread that ended
 * meanwhile, e.g. a finished job's ETL thread), so sampling often keeps what ended threads
 * used up to their last sample; null readings are skipped.
 */
export function keepEnded(seen: ProcessCpu | null, now: ProcessCpu | null): ProcessCpu | null {
  if (!now) return seen;
  if (!seen) return now;
  const threads = new Map(now.threads);
  for (const [tid, t] of seen.threads) {
    const current = threads.get(tid);
    if (!current) threads.set(tid, t);
    else if (current.startMs !== t.startMs) {
      // Linux gave an ended thread's id to a new one: the ended one keeps its reading under a
      // number above every real id (so it sorts with the later threads and names no start-up role).
      let key = tid + REUSED_TID;
      while (threads.has(key)) key += REUSED_TID;
      threads.set(key, t);
    }
  }
  return { ...now, threads };
}

/**
 * What each thread is, for a Node 20 process, where every thread is called `node`: Node creates
 * its own threads at start-up in a fixed order after the main thread (V8's platform: the
 * delayed-task thread, then `--v8-pool-size` workers, 4 by default, for GC and compilation; the
 * inspector's signal thread; then libuv's pool, UV_THREADPOOL_SIZE, 4 by default: fs, zlib,
 * crypto), and every later thread is a worker thread (`new Worker`: here the projector and ETL
 * threads, a scrub's). Where threads carry names of their own (a newer Node), the name is kept.
 */
function roleOf(pid: number, tids: number[], tid: number, t: ThreadCpu, libuvPool: number, existedBefore: boolean): string {
  if (tid === pid) return 'main thread (HTTP, commands, job runner, webhook engine)';
  if (t.name !== 'node') return t.name;
  const k = tids.indexOf(tid);
  if (k === 1) return 'V8 platform: delayed tasks';
  if (k >= 2 && k <= 5) return 'V8 platform workers (GC, compilation)';
  if (k === 6) return 'inspector signal thread';
  if (k >= 7 && k < 7 + libuvPool) return "libuv's pool (fs, zlib, crypto)";
  return `worker thread ${tid} (started ${(t.startMs / 1000).toFixed(1)} s after the process, ${existedBefore ? 'before' : 'during'} the measured window)`;
}

/** CPU used between two readings, per thread role: threads of one role (libuv's pool, V8's workers) summed, with how many they are. */
export type CpuSplit = { totalMs: number; rows: { name: string; threads: number; ms: number }[] };

/**
 * What the process used from `before` to `after`, grouped by role (roleOf), most first. A thread
 * that started in between counts from zero; what threads that ended in between used is the
 * process total less the live threads' sum, shown as its own row when it is more than a tick.
 * `libuvPool`: the size of libuv's pool in the measured process.
 */
export function cpuSplit(before: ProcessCpu, after: ProcessCpu, libuvPool = Number(process.env.UV_THREADPOOL_SIZE ?? 4)): CpuSplit {
  const byRole = new Map<string, { threads: number; ms: number }>();
  // Threads that ended before `after` keep their place in the order of creation.
  const tids = [...new Set([...before.threads.keys(), ...after.threads.keys()])].sort((a, b) => a - b);
  let live = 0;
  for (const [tid, t] of after.threads) {
    // A thread that reuses the id of one read before counts from zero.
    const b = before.threads.get(tid);
    const ms = t.ms - (b && b.startMs === t.startMs ? b.ms : 0);
    live += ms;
    const role = roleOf(after.pid, tids, tid, t, libuvPool, before.threads.has(tid));
    const row = byRole.get(role) ?? { threads: 0, ms: 0 };
    byRole.set(role, { threads: row.threads + 1, ms: row.ms + ms });
  }
  const totalMs = after.totalMs - before.totalMs;
  const rows = [...byRole].map(([name, r]) => ({ name, ...r }));
  if (totalMs - live > TICK_MS) rows.push({ name: '(threads that ended meanwhile)', threads: 0, ms: totalMs - live });
  return { totalMs, rows: rows.sort((a, b) => b.ms - a.ms) };
}

/** Prints the split as a table: per thread role, its CPU in ms and per unit of work (`per` of them, e.g. uploads). */
export function printCpuSplit(title: string, split: CpuSplit, per: number, unit: string): void {
  console.log(`\n| ${title} | threads | CPU ms | ms per ${unit} | share |`);
  console.log('|---|---:|---:|---:|---:|');
  for (const r of split.rows) {
    if (r.ms === 0) continue;
    console.log(`| ${r.name} | ${r.threads || ''} | ${r.ms.toFixed(0)} | ${(r.ms / per).toFixed(2)} | ${((100 * r.ms) / (split.totalMs || 1)).toFixed(0)} % |`);
  }
  console.log(`| **all threads** | | **${split.totalMs.toFixed(0)}** | **${(split.totalMs / per).toFixed(2)}** | |`);
}

/**
 * Bytes written between two readings, per thread role (as `cpuSplit` groups them), printed per
 * unit of work: `wchar` (every write call) and `write_bytes` (file pages dirtied). Nothing when
 * /proc's io files cannot be read.
 */
export function printIoSplit(title: string, before: ProcessCpu, after: ProcessCpu, per: number, unit: string, libuvPool = Number(process.env.UV_THREADPOOL_SIZE ?? 4)): void {
  if (!before.io || !after.io) return;
  const tids = [...new Set([...before.threads.keys(), ...after.threads.keys()])].sort((a, b) => a - b);
  const byRole = new Map<string, Io>();
  for (const [tid, t] of after.threads) {
    if (!t.io) continue;
    const b = before.threads.get(tid)?.io;
    const role = roleOf(after.pid, tids, tid, t, libuvPool, before.threads.has(tid));
    const row = byRole.get(role) ?? { wchar: 0, writeBytes: 0 };
    byRole.set(role, { wchar: row.wchar + t.io.wchar - (b?.wchar ?? 0), writeBytes: row.writeBytes + t.io.writeBytes - (b?.writeBytes ?? 0) });
  }
  const kb = (bytes: number) => (bytes / per / 1024).toFixed(1);
  console.log(`\n| ${title} | KiB written per ${unit} (write calls, \`wchar\`) | KiB of file pages dirtied per ${unit} (\`write_bytes\`) |`);
  console.log('|---|---:|---:|');
  for (const [name, io] of [...byRole].sort((a, b) => b[1].wchar - a[1].wchar)) if (io.wchar || io.writeBytes) console.log(`| ${name} | ${kb(io.wchar)} | ${kb(io.writeBytes)} |`);
  console.log(`| **the process** | **${kb(after.io.wchar - before.io.wchar)}** | **${kb(after.io.writeBytes - before.io.writeBytes)}** |`);
}
