import { MultiBar, type SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { projections } from '../../projections/index.js';
import { replayStoreOf } from '../app/stores.js';
import { DeadLetterError } from '../projector/deadLetterReplay.js';
import { errorText, listDeadLetters, type DeadLetterDoc } from '../projector/deadLetters.js';
import type { ProjectionStatus, RebuildProgress } from '../projector/projectorRuntime.js';
import { CliError, formatTable, printJson, printLine, withContext, type OpenContext } from './shared.js';

/**
 * SQLite's page cache for a rebuild (MiB; the service's connections keep 16 to 48). A million
 * samples replayed with random record keys keep about 50 MiB of key index hot: with the default
 * cache every transaction read again, from the operating system, index pages it had just evicted
 * (BENCHMARKS.md, "The rebuild of 1M samples").
 */
const REBUILD_CACHE_MIB = 256;

/**
 * `projections status`, `projections rebuild [names...]`, `projections dead-letters` and
 * `projections replay-dead-letter <id>` over every projection in projections/index.ts.
 */
export function registerProjectionsCommands(program: Command, open: OpenContext): void {
  const group = program.command('projections').description('inspect and rebuild read models; list and replay dead-lettered events');

  group
    .command('status')
    .description('per projection: status, checkpoint position, head of the log, lag in events and seconds, open dead letters, and a stall: waiting on its store (busy, full, io, network, failover) or stopped on an erasure event, since when')
    .option('--json', 'one JSON line per projection instead of a table')
    .action(async (opts: { json?: boolean }) => {
      // No runners here: the point is to see where the stored checkpoints are, not to move them.
      const rows = await withContext(open, { runBackground: false }, (ctx) => ctx.projectors.status());
      if (opts.json) {
        for (const s of rows) printJson(statusJson(s));
        return;
      }
      const table = formatTable(
        ['PROJECTION', 'STATUS', 'POSITION', 'HEAD', 'LAG', 'LAG_SECONDS', 'DEAD_LETTERS', 'STALL'],
        rows.map((s) => [s.name, s.status, s.position, s.head, s.lag, s.lagSeconds === null ? '-' : s.lagSeconds.toFixed(1), s.deadLetters, stallText(s.stall)]),
      );
      for (const line of table) printLine(line);
    });

  group
    .command('rebuild')
    .description("drop and replay the named projections (default: all) from the start of the event log; an interrupted rebuild leaves the projection 'rebuilding' (see `projections status`) until it is run again")
    .argument('[names...]', `projections to rebuild: ${projections.map((p) => p.name).join(', ')}`)
    .option('--json', 'summary as one JSON line per projection')
    .option('--no-progress', 'no progress bars on stderr')
    .option('--pipeline', "embedded store: the replay's writes on a thread of their own while this one reads and evolves the next chunk (faster with a second core to spare; more CPU in all; docs/rebuild.md)")
    .action(async (names: string[], opts: { json?: boolean; progress: boolean; pipeline?: boolean }) => {
      const unknown = names.filter((n) => !projections.some((p) => p.name === n));
      if (unknown.length) {
        throw new CliError(`unknown projection(s): ${unknown.join(', ')} (known: ${projections.map((p) => p.name).join(', ')})`);
      }
      // No live runner in this process competes with the replay; runners in a running server
      // see the 'rebuilding' checkpoint, pause, and resume from the rebuilt checkpoint.
      const results = await withContext(open, { runBackground: false, readCacheMiB: REBUILD_CACHE_MIB }, async (ctx) => {
        const bars = opts.progress ? new RebuildBars() : null;
        try {
          // --pipeline: the replays write on a thread of their own while this one reads the log and evolves (docs/rebuild.md).
          const replayStore = opts.pipeline ? replayStoreOf(ctx.config, { readCacheMiB: REBUILD_CACHE_MIB }) : undefined;
          return await ctx.projectors.rebuild(names, (p) => bars?.update(p), replayStore);
        } finally {
          bars?.stop();
        }
      });
      if (opts.json) {
        for (const r of results) printJson(summaryJson(r));
        return;
      }
      const table = formatTable(
        ['PROJECTION', 'EVENTS', 'SECONDS', 'EVENTS/S', 'POSITION'],
        results.map((r) => {
          const s = summaryJson(r);
          return [s.name, s.events, s.seconds.toFixed(2), s.events_per_second, s.position];
        }),
      );
      for (const line of table) printLine(line);
    });

  group
    .command('dead-letters')
    .description('events a projection could not apply and skipped after retrying (open ones; --all adds those replayed, applied by a rebuild, or gone with an erasure)')
    .option('--all', 'also the dead letters that are closed')
    .option('--json', 'one JSON line per dead letter instead of a table')
    .action(async (opts: { all?: boolean; json?: boolean }) => {
      const letters = await withContext(open, { runBackground: false }, (ctx) => listDeadLetters(ctx.readStore, { all: opts.all }));
      if (opts.json) {
        for (const d of letters) printJson(deadLetterJson(d));
        return;
      }
      const table = formatTable(
        ['ID', 'PROJECTION', 'POSITION', 'EVENT_TYPE', 'STATUS', 'DEAD_LETTERED_AT', 'ERROR'],
        letters.map((d) => [d._id, d.projection, d.position, d.event_type, d.status, d.dead_lettered_at, d.error]),
      );
      for (const line of table) printLine(line);
    });

  group
    .command('replay-dead-letter')
    .description('apply a dead-lettered event again, once the code that failed on it is fixed; it is applied as of now (`projections rebuild <projection>` applies every dead letter in its place in the log instead)')
    .argument('<id>', 'the dead letter, as `projections dead-letters` lists it (<projection>@<position>)')
    .option('--json', 'the outcome as one JSON line')
    .action(async (id: string, opts: { json?: boolean }) => {
      const outcome = await withContext(open, { runBackground: false }, async (ctx) => {
        try {
          return await ctx.projectors.replayDeadLetter(id);
        } catch (err) {
          // The replay failed again or cannot run: the dead letter stays open, nothing changed.
          throw new CliError(err instanceof DeadLetterError ? err.message : `replaying ${id} failed again; nothing changed: ${errorText(err)}`);
        }
      });
      if (opts.json) printJson(outcome);
      else printLine(outcome.status === 'replayed' ? `${id}: replayed into ${outcome.projection} at checkpoint ${outcome.checkpoint}` : `${id}: its event is no longer in the log (erased); closed as gone`);
    });
}

function deadLetterJson(d: DeadLetterDoc) {
  const { _id, ...rest } = d;
  return { id: _id, ...rest };
}

function statusJson(s: ProjectionStatus) {
  return { name: s.name, status: s.status, position: s.position, head: s.head, lag: s.lag, lag_seconds: s.lagSeconds, last_event_at: s.lastEventAt, dead_letters: s.deadLetters, stall: s.stall };
}

/** `-`, `waiting (busy) since <t>, <n> retries: <error>`, or `stopped on user.erased@<pos> since <t>...`. */
function stallText(stall: ProjectionStatus['stall']): string {
  if (!stall) return '-';
  const what = stall.state === 'stopped' ? `stopped on ${stall.event_type}@${stall.event_position}` : `waiting (${stall.kind})`;
  return `${what} since ${stall.since}, ${stall.retries} retries: ${stall.error}`;
}

function summaryJson(r: RebuildProgress) {
  const seconds = r.elapsedMs / 1000;
  return { name: r.projection, events: r.events, seconds, events_per_second: rate(r), position: r.position };
}

function rate(p: RebuildProgress): number {
  return p.elapsedMs > 0 ? Math.round((p.events * 1000) / p.elapsedMs) : p.events;
}

const NOT_TTY_SCHEDULE_MS = 5000;

/** Time left, extrapolated from how fast the replay has moved through the log so far. */
function eta(p: RebuildProgress): string {
  if (p.position >= p.head) return '0s';
  if (p.position === 0 || p.elapsedMs === 0) return '-';
  const s = Math.round(((p.head - p.position) * p.elapsedMs) / p.position / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * One bar per projection on stderr, created when its replay starts (projections are rebuilt one
 * after the other). Off a terminal (CI, redirected stderr) cli-progress prints a plain snapshot
 * of the bars every few seconds and the final state once, instead of redrawing in place.
 */
class RebuildBars {
  private readonly multi = new MultiBar({
    stream: process.stderr,
    format: '{name} {bar} {percentage}% | {value}/{total} | {rate} ev/s | ETA {eta_text}',
    barsize: 20,
    // Ctrl-C keeps its default (the process ends at once), and leaves the terminal's cursor as it was.
    hideCursor: false,
    gracefulExit: false,
    noTTYOutput: true,
    notTTYSchedule: NOT_TTY_SCHEDULE_MS,
  });
  private readonly bars = new Map<string, SingleBar>();
  private readonly width = Math.max(...projections.map((p) => p.name.length));
  private current: { name: string; head: number } | null = null;
  private stopped = false;
  private lastDraw = 0;
  private readonly drawEveryMs = process.stderr.isTTY ? 100 : NOT_TTY_SCHEDULE_MS;

  update(p: RebuildProgress): void {
    if (this.current && this.current.name !== p.projection) this.finish();
    let bar = this.bars.get(p.projection);
    const payload = { name: p.projection.padEnd(this.width), rate: rate(p), eta_text: eta(p) };
    if (!bar) {
      bar = this.multi.create(p.head, 0, payload);
      this.bars.set(p.projection, bar);
    }
    bar.setTotal(p.head);
    bar.update(p.position, payload);
    this.current = { name: p.projection, head: p.head };
    // The embedded store replays synchronously, so cli-progress's own timer may not get a turn
    // until the end: redraw from here as well, at the same pace.
    const now = Date.now();
    if (now - this.lastDraw >= this.drawEveryMs) {
      this.lastDraw = now;
      this.multi.update();
    }
  }

  /** A projection's replay ends at its last relevant event; the log beyond it needs nothing. */
  private finish(): void {
    if (!this.current) return;
    this.bars.get(this.current.name)?.update(this.current.head, { eta_text: '0s' });
    this.current = null;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.finish();
    this.multi.stop();
  }
}
