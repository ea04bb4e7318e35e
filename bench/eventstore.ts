/**
 * `npm run bench -- eventstore [--events=200000] [--batch=1000] [--single=2000] [--reps=3] [--dir=PATH]`
 *
 * The embedded event store (and the projector on top of it), each measurement next to the
 * physical limit of the same work on the same machine in the same run: raw better-sqlite3 with
 * the same pragmas, the same columns and the same keys. Every figure is the median of `reps`
 * runs, ours and raw alternating, each into a fresh file.
 */
import { randomUUID } from 'node:crypto';
import { uuidv7 } from '../src/shared/ids.js';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { UserRegistered } from '../commands/users/user.js';
import { userStream } from '../commands/users/user.js';
import { projections } from '../projections/index.js';
import { SqliteEventStore } from '../src/eventstore/sqliteEventStore.js';
import { ProjectorRuntime } from '../src/projector/projectorRuntime.js';
import { SqliteReadStore } from '../src/readstore/sqliteReadStore.js';
import { EVENTS_COLUMNS } from '../src/eventstore/sqliteEventRows.js';

type Options = { events: number; batch: number; single: number; reps: number; dir: string | null };
type Row = { label: string; ours: number; raw: number; note: string; oursMB?: number | null; rawMB?: number | null };
type Ev = UserRegistered & { id: string };

/** The adapter's `events` table (src/eventstore/sqliteEventRows.ts), keys and all. */
const EVENTS_DDL = `CREATE TABLE events (${EVENTS_COLUMNS})`;
/** Same columns, rowid only: no AUTOINCREMENT, no unique index. The floor for these rows. */
const BARE_DDL = `CREATE TABLE events (
  position INTEGER PRIMARY KEY, id TEXT NOT NULL, stream TEXT NOT NULL, revision INTEGER NOT NULL,
  type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT, created_at INTEGER NOT NULL)`;
const INSERT = 'INSERT INTO events (id, stream, revision, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)';
/** The users collection as SqliteReadStore lays it out (projections/users/usersProjection.ts). */
const USERS_DDL = [
  'CREATE TABLE rm_users (_id TEXT PRIMARY KEY, doc TEXT NOT NULL)',
  `CREATE INDEX rm_users_ix ON rm_users (json_extract(doc, '$.tenant_id') ASC, json_extract(doc, '$.created_at') ASC)`,
];
const REBUILD_BATCH = 5000;

function parseOptions(args: string[]): Options {
  const o: Options = { events: 200_000, batch: 1000, single: 2000, reps: 3, dir: null };
  for (const a of args) {
    const m = /^--(events|batch|single|reps|dir)=(.+)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a} (expected --events= --batch= --single= --reps= --dir=)`);
    if (m[1] === 'dir') o.dir = m[2]!;
    else o[m[1] as Exclude<keyof Options, 'dir'>] = Number(m[2]);
  }
  return o;
}

function openRaw(path: string, synchronous: 'FULL' | 'NORMAL', ddl: string | string[]): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  for (const s of Array.isArray(ddl) ? ddl : [ddl]) db.exec(s);
  return db;
}

/**
 * user.registered events shaped like commands/users/registerUser.ts makes them. Their ids are the
 * time-ordered UUIDv7 the store generates for events without one, supplied here so that the raw
 * baseline inserts exactly the same rows.
 */
function userEvents(n: number, offset: number): Ev[] {
  const tenants = Array.from({ length: 20 }, () => randomUUID());
  const base = Date.parse('2026-11-22T00:00:00.000Z');
  return Array.from({ length: n }, (_, k) => {
    const i = offset + k;
    return {
      id: uuidv7(base + i),
      type: 'user.registered' as const,
      data: { user_id: randomUUID(), tenant_id: tenants[i % tenants.length]!, external_ref: i % 3 === 0 ? null : `crm-${i}`, created_at: new Date(base + i).toISOString() },
    };
  });
}

function chunk<T>(xs: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Bytes this process has written through write(2) so far (Linux), or null. Unlike time, it does not depend on the neighbours. */
function bytesWritten(): number | null {
  if (!existsSync('/proc/self/io')) return null;
  const m = /^wchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
  return m ? Number(m[1]) : null;
}

let lastWrittenMB: number | null = null;

/** Wall time of `fn` in ms; the megabytes it wrote are left in `lastWrittenMB`. */
async function timed(fn: () => unknown): Promise<number> {
  const w0 = bytesWritten();
  const t = performance.now();
  await fn();
  const ms = performance.now() - t;
  const w1 = bytesWritten();
  lastWrittenMB = w0 === null || w1 === null ? null : (w1 - w0) / 1e6;
  return ms;
}

const rate = (n: number, ms: number) => (n / ms) * 1000;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export default async function eventstoreBench(args: string[]): Promise<void> {
  const o = parseOptions(args);
  const dir = mkdtempSync(join(o.dir ?? os.tmpdir(), 'wellstream-bench-'));
  let fileNo = 0;
  const file = (name: string) => join(dir, `${name}-${fileNo++}.sqlite`);
  const drop = (path: string) => ['', '-wal', '-shm'].forEach((s) => rmSync(path + s, { force: true }));
  const rows: Row[] = [];
  /** MB written in the timed section of the last repetition of each measurement (deterministic, unlike time). */
  const mb = new Map<string, number | null>();
  const progress = (s: string) => process.stderr.write(`  ${s}\n`);
  /** A row of medians over the repetitions' timings of `count` events, with the MB written under `mbKeys` (ours, raw). */
  const compared = (label: string, count: number, ours: number[], raw: number[], note: string, mbKeys?: readonly [string, string]): Row => ({
    label,
    ours: rate(count, median(ours)),
    raw: rate(count, median(raw)),
    ...(mbKeys ? { oursMB: mb.get(mbKeys[0]), rawMB: mb.get(mbKeys[1]) } : {}),
    note,
  });

  console.log('Wellstream embedded event store benchmark');
  console.log(`  cpu      ${os.cpus()[0]?.model ?? 'unknown'} x ${os.cpus().length} (available parallelism ${os.availableParallelism()})`);
  console.log(`  memory   ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()} ${os.arch()}`);
  console.log(`  node     ${process.version}, better-sqlite3 SQLite ${new Database(':memory:').prepare('select sqlite_version() v').pluck().get() as string}`);
  console.log(`  date     ${new Date().toISOString()}`);
  console.log(`  data dir ${dir}`);
  console.log(`  workload ${fmt(o.events)} user.registered events, appends of ${o.batch}; ${fmt(o.single)} single-event appends; median of ${o.reps}\n`);

  try {
    // ---- 1. batched appends ---------------------------------------------------------------
    const events = userEvents(o.events, 0);
    const batches = chunk(events, o.batch).map((evs) => ({ stream: userStream(evs[0]!.data.user_id), evs }));
    const ours: number[] = [];
    const rawKeys: number[] = [];
    const rawBare: number[] = [];
    let storePath = '';
    for (let r = 0; r < o.reps; r++) {
      const p = file('ours-batched');
      const store = new SqliteEventStore({ path: p });
      ours.push(
        await timed(async () => {
          for (const b of batches) await store.appendToStream(b.stream, b.evs, { expectedRevision: 'no_stream' });
        }),
      );
      mb.set('batched/ours', lastWrittenMB);
      await store.close();
      if (storePath) drop(storePath);
      storePath = p; // the last one feeds the read and projection phases
      for (const [ddl, out, key] of [
        [EVENTS_DDL, rawKeys, 'batched/keys'],
        [BARE_DDL, rawBare, 'batched/bare'],
      ] as const) {
        const rp = file('raw-batched');
        const db = openRaw(rp, 'FULL', ddl);
        const insert = db.prepare(INSERT);
        const tx = db.transaction((b: (typeof batches)[number]) => {
          const now = Date.now();
          b.evs.forEach((e, rev) => insert.run(e.id, b.stream, rev, e.type, JSON.stringify(e.data), null, now));
        });
        out.push(await timed(() => batches.forEach((b) => tx.immediate(b))));
        mb.set(key, lastWrittenMB);
        db.close();
        drop(rp);
      }
      progress(`batched appends rep ${r + 1}: ours ${fmt(rate(o.events, ours[r]!))}/s, raw same keys ${fmt(rate(o.events, rawKeys[r]!))}/s, raw bare ${fmt(rate(o.events, rawBare[r]!))}/s`);
    }
    rows.push(compared(`batched append (${o.batch}/append) vs raw, same keys`, o.events, ours, rawKeys, 'tx per batch, WAL, synchronous=FULL', ['batched/ours', 'batched/keys']));
    rows.push(compared(`batched append (${o.batch}/append) vs raw, bare table`, o.events, ours, rawBare, 'rowid only, no unique indexes', ['batched/ours', 'batched/bare']));

    // ---- 2. single-event appends -----------------------------------------------------------
    const singles: number[] = [];
    const rawSingles: number[] = [];
    for (let r = 0; r < o.reps; r++) {
      const evs = userEvents(o.single, 0);
      const p = file('ours-single');
      const store = new SqliteEventStore({ path: p });
      singles.push(
        await timed(async () => {
          for (const e of evs) await store.appendToStream(userStream(e.data.user_id), [e], { expectedRevision: 'no_stream' });
        }),
      );
      mb.set('single/ours', lastWrittenMB);
      await store.close();
      drop(p);
      const rp = file('raw-single');
      const db = openRaw(rp, 'FULL', EVENTS_DDL);
      const insert = db.prepare(INSERT);
      const tx = db.transaction((e: Ev) => insert.run(e.id, userStream(e.data.user_id), 0, e.type, JSON.stringify(e.data), null, Date.now()));
      rawSingles.push(await timed(() => evs.forEach((e) => tx.immediate(e))));
      mb.set('single/raw', lastWrittenMB);
      db.close();
      drop(rp);
      progress(`single appends rep ${r + 1}: ours ${fmt(rate(o.single, singles[r]!))}/s, raw ${fmt(rate(o.single, rawSingles[r]!))}/s`);
    }
    rows.push(compared('single-event append vs raw single-row tx', o.single, singles, rawSingles, 'one fsync each: the disk decides', ['single/ours', 'single/raw']));

    // ---- 3. catch-up read ------------------------------------------------------------------
    const reads: number[] = [];
    const rawReads: number[] = [];
    for (let r = 0; r < o.reps; r++) {
      const store = new SqliteEventStore({ path: storePath });
      const head = await store.headPosition();
      let seen = 0;
      reads.push(
        await timed(
          () =>
            new Promise<void>((resolve, reject) => {
              const sub = store.subscribeToAll({ after: 0 }).subscribe({
                next: (e) => {
                  seen++;
                  if (e.globalPosition >= head) {
                    sub.unsubscribe();
                    resolve();
                  }
                },
                error: reject,
              });
            }),
        ),
      );
      await store.close();
      if (seen !== o.events) throw new Error(`catch-up delivered ${seen} events, expected ${o.events}`);
      const db = new Database(storePath, { readonly: true });
      let n = 0;
      rawReads.push(
        await timed(() => {
          for (const row of db.prepare('SELECT * FROM events ORDER BY position').iterate() as IterableIterator<{ data: string; metadata: string | null }>) {
            JSON.parse(row.data);
            if (row.metadata) JSON.parse(row.metadata);
            n++;
          }
        }),
      );
      db.close();
      if (n !== o.events) throw new Error(`raw read ${n} rows`);
      progress(`catch-up rep ${r + 1}: ours ${fmt(rate(o.events, reads[r]!))}/s, raw ${fmt(rate(o.events, rawReads[r]!))}/s`);
    }
    rows.push(compared('catch-up subscribeToAll(0) vs raw SELECT+JSON.parse', o.events, reads, rawReads, 'from position 0 to the last event'));

    // ---- 4. projection rebuild -------------------------------------------------------------
    const rebuilds: number[] = [];
    const rawProjections: number[] = [];
    const users = projections.find((p) => p.name === 'users')!;
    const docs = chunk(
      events.map((e) => {
        const change = users.evolve({ ...e, metadata: {}, streamName: '', streamRevision: 0, globalPosition: 0, createdAt: new Date() }, 0)[0]!;
        if (change.op !== 'put') throw new Error('users projection: expected a put for user.registered');
        return change.doc;
      }),
      REBUILD_BATCH,
    );
    for (let r = 0; r < o.reps; r++) {
      const store = new SqliteEventStore({ path: storePath });
      const rp = file('readmodels');
      const readStore = new SqliteReadStore({ path: rp });
      const runtime = new ProjectorRuntime(store, readStore, projections);
      await runtime.init();
      let projected = 0;
      rebuilds.push(await timed(async () => (projected = (await runtime.rebuild(['users']))[0]!.events)));
      mb.set('projection/ours', lastWrittenMB);
      const count = await readStore.count('users');
      await readStore.close();
      await store.close();
      drop(rp);
      if (projected !== o.events || count !== o.events) throw new Error(`rebuild projected ${projected} events into ${count} documents`);
      const dp = file('raw-readmodels');
      const db = openRaw(dp, 'NORMAL', USERS_DDL);
      const insert = db.prepare('INSERT INTO rm_users (_id, doc) VALUES (?, ?)');
      const tx = db.transaction((batch: (typeof docs)[number]) => batch.forEach((d) => insert.run(d._id, JSON.stringify(d))));
      rawProjections.push(await timed(() => docs.forEach((b) => tx.immediate(b))));
      mb.set('projection/raw', lastWrittenMB);
      db.close();
      drop(dp);
      progress(`projection rep ${r + 1}: ours ${fmt(rate(o.events, rebuilds[r]!))}/s, raw ${fmt(rate(o.events, rawProjections[r]!))}/s`);
    }
    rows.push(compared('projection rebuild (users) vs raw doc inserts', o.events, rebuilds, rawProjections, `tx per ${REBUILD_BATCH}, WAL, synchronous=NORMAL`, ['projection/ours', 'projection/raw']));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const w = Math.max(...rows.map((r) => r.label.length));
  const mbText = (x: number | null | undefined) => (x === null || x === undefined ? '-' : x.toFixed(0));
  console.log(`\n${'measurement'.padEnd(w)}  ${'ours ev/s'.padStart(11)}  ${'raw ev/s'.padStart(11)}  ${'ratio'.padStart(6)}  ${'MB written ours/raw'.padStart(19)}  notes`);
  console.log(`${'-'.repeat(w)}  ${'-'.repeat(11)}  ${'-'.repeat(11)}  ${'-'.repeat(6)}  ${'-'.repeat(19)}  ${'-'.repeat(5)}`);
  for (const r of rows) {
    const written = `${mbText(r.oursMB)} / ${mbText(r.rawMB)}`;
    console.log(`${r.label.padEnd(w)}  ${fmt(r.ours).padStart(11)}  ${fmt(r.raw).padStart(11)}  ${`${((r.ours / r.raw) * 100).toFixed(0)}%`.padStart(6)}  ${written.padStart(19)}  ${r.note}`);
  }
  for (const r of rows.slice(0, 2)) {
    const ratio = r.ours / r.raw;
    console.log(`acceptance (batched appends >= 30% of raw insert throughput), ${r.label.replace(/^.* vs /, 'vs ')}: ${(ratio * 100).toFixed(0)}% -> ${ratio >= 0.3 ? 'PASS' : 'FAIL'}`);
  }
}
