import type { ReadStore } from '../../src/readstore/readStore.js';
import { utcDayOf } from '../../projections/records/recordDoc.js';
import { SAMPLE_ROLLUPS } from '../../projections/records/sampleRollups/dayRollup.js';
import { HOUR_MS, HOURS_FIELD, HOURS_PER_DAY, PackedRun, QUARTER_MS, QUARTERS_FIELD, QUARTERS_PER_DAY, type Stat } from '../../projections/records/sampleRollups/rollupLayout.js';
import type { View } from './view.js';

const DAY_MS = 86_400_000;

/** One answer interval [start, end) in epoch ms, quarter-aligned. */
export type Interval = { start: number; end: number };

export type SeriesStat = { interval: number; provider: string; source: string; unit: string } & Stat;

/** True when every boundary falls on a UTC quarter hour, so rollups can answer (offsets since 1972 all do). */
export const quarterAligned = (intervals: readonly Interval[]): boolean => intervals.every((i) => i.start % QUARTER_MS === 0 && i.end % QUARTER_MS === 0);

/** A UTC day the answer reads, with its pieces: triples (from, to, interval), the quarters (or hours) [from, to) of the day that belong to that interval. */
type Day = { dayMs: number; pieces: number[] };

/**
 * Statistics of one type from the rollups (projections/records/sampleRollups): for each interval,
 * each series' count, sum, min and max, added up from the quarter hours of the UTC days it spans,
 * or from their hours where every boundary is a whole UTC hour (a quarter of the bytes and of the
 * additions: Berlin's local days and hours, not Kathmandu's). A series' days reach JavaScript as
 * one value (ReadStore.joinBytes: its packed fields joined, each naming its day), not as a document
 * and a Buffer per day: a year of days read ~730 of each per request, and collecting them cost more
 * than adding them up (issue 38). Each present quarter (hour) of a day is visited once (a day's
 * pieces, the quarters of each interval it holds, are consecutive runs). The same read and the
 * same arithmetic on every store; days are added in ascending order whatever order the store
 * joined them in, so a sum is the same on every store and every time.
 * `intervals` must be ascending, contiguous and quarter-aligned (quarterAligned). Answers in
 * order of interval, provider, source, unit.
 */
export async function statsFromRollups(
  readStore: ReadStore,
  q: { userId: string; type: string; view: View; provider?: string },
  intervals: readonly Interval[],
): Promise<SeriesStat[]> {
  const series = await seriesStatsFromRollups(readStore, q, intervals);
  const out: SeriesStat[] = [];
  for (let i = 0; i < intervals.length; i++) {
    for (const { provider, source, unit, stats } of series) {
      if (stats[4 * i]! > 0) out.push({ interval: i, provider, source, unit, count: stats[4 * i]!, sum: stats[4 * i + 1]!, min: stats[4 * i + 2]!, max: stats[4 * i + 3]! });
    }
  }
  return out;
}

/**
 * One series' statistics over the intervals, as columns: `stats[4·i..4·i+3]` are interval i's
 * count, sum, min and max (a count of 0: no samples, whatever the other three hold).
 */
export type SeriesColumns = { provider: string; source: string; unit: string; stats: Float64Array };

/**
 * statsFromRollups' answer before it is made into one object per bucket: the series in answer
 * order (provider, source, unit), each with its intervals' statistics as columns. A writer that
 * goes straight to the answer's bytes (sampleStatsJson.ts) reads these: a year of
 * days in view `all` is 730 buckets, and an object per bucket was garbage of every request.
 */
export async function seriesStatsFromRollups(
  readStore: ReadStore,
  q: { userId: string; type: string; view: View; provider?: string },
  intervals: readonly Interval[],
): Promise<SeriesColumns[]> {
  if (!intervals.length) return [];
  // Whole UTC hours (every zone whose offsets are whole hours): the hours field, a quarter of the bytes.
  const hours = intervals.every((i) => i.start % HOUR_MS === 0 && i.end % HOUR_MS === 0);
  const days = piecesByDay(intervals, hours ? HOUR_MS : QUARTER_MS);
  const firstDay = days[0]!.dayMs / DAY_MS;
  const groups = await readStore.joinBytes(SAMPLE_ROLLUPS, {
    filter: { user_id: q.userId, type: q.type, view: q.view, ...(q.provider !== undefined ? { provider: q.provider } : {}), day: { $gte: utcDayOf(days[0]!.dayMs), $lte: utcDayOf(days[days.length - 1]!.dayMs) } },
    groupBy: SERIES,
    field: hours ? HOURS_FIELD : QUARTERS_FIELD,
  });
  const series: SeriesColumns[] = [];
  // Where each day's field begins in a series' run (-1: none that day); reused from series to series.
  const at = new Int32Array(days.length);
  for (const { group, bytes } of groups) {
    const run = new PackedRun(bytes, hours ? HOURS_PER_DAY : QUARTERS_PER_DAY);
    at.fill(-1);
    for (let offset = 0; offset < run.byteLength; offset = run.endOf(offset)) {
      const d = run.dayAt(offset) - firstDay;
      if (!(d >= 0 && d < days.length) || at[d] !== -1) throw new Error(`rollup rows of ${q.type}: a packed field of day ${run.dayAt(offset)} outside the window or twice`);
      at[d] = offset;
    }
    const stats = new Float64Array(4 * intervals.length);
    for (let d = 0; d < days.length; d++) if (at[d]! >= 0) run.addQuarters(at[d]!, days[d]!.pieces, stats);
    series.push({ provider: group.provider as string, source: group.source as string, unit: group.unit as string, stats });
  }
  // The store answers groups in (provider, source, unit) order already; sorted here by code unit, as every answer is, whatever a store's collation.
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return series.sort((a, b) => cmp(a.provider, b.provider) || cmp(a.source, b.source) || cmp(a.unit, b.unit));
}

/** A series of the rollups: one group of joined fields. */
const SERIES = ['provider', 'source', 'unit'] as const;

/** The UTC days the intervals touch, ascending, each with its pieces in ascending order, in units of `unitMs` (a quarter or an hour, a divisor of every boundary). */
function piecesByDay(intervals: readonly Interval[], unitMs: number): Day[] {
  const days: Day[] = [];
  intervals.forEach(({ start, end }, i) => {
    for (let d = Math.floor(start / DAY_MS) * DAY_MS; d < end; d += DAY_MS) {
      const from = Math.max(start, d);
      const to = Math.min(end, d + DAY_MS);
      if (from >= to) continue;
      let last = days[days.length - 1];
      if (!last || last.dayMs !== d) days.push((last = { dayMs: d, pieces: [] }));
      last.pieces.push((from - d) / unitMs, (to - d) / unitMs, i);
    }
  });
  return days;
}
