import type { DayRun, DayRunsQuery, ReadStore } from '../../src/readstore/readStore.js';
import { dayRunsByFind } from '../../src/readstore/dayRuns.js';
import { utcDayOf } from '../../projections/records/recordDoc.js';
import { SAMPLE_ROLLUPS } from '../../projections/records/sampleRollups/dayRollup.js';
import {
  hourGroup,
  HOURS_PER_DAY,
  prefixGroup,
  quarterGroup,
  QUARTERS_PER_DAY,
  statColumnsOf,
  suffixGroup,
  type Stat,
  type StatGroup,
} from '../../projections/records/sampleRollups/rollupLayout.js';
import type { View } from './view.js';

const QUARTER_MS = 900_000;
const DAY_MS = 86_400_000;

/** One answer interval [start, end) in epoch ms, quarter-aligned. */
export type Interval = { start: number; end: number };

export type SeriesStat = { interval: number; provider: string; source: string; unit: string } & Stat;

/** True when every boundary falls on a UTC quarter hour, so rollups can answer (offsets since 1972 all do). */
export const quarterAligned = (intervals: readonly Interval[]): boolean => intervals.every((i) => i.start % QUARTER_MS === 0 && i.end % QUARTER_MS === 0);

/**
 * The column groups of one UTC day's rollup row that add up to the part [from, to) of that day
 * (quarter indices, 0..96): the day's prefix or suffix where the part touches midnight, whole
 * hours, and at most three quarters at each ragged end.
 */
export function groupsFor(from: number, to: number): StatGroup[] {
  if (from === 0 && to === QUARTERS_PER_DAY) return [prefixGroup(HOURS_PER_DAY - 1)];
  const groups: StatGroup[] = [];
  const firstHour = Math.ceil(from / 4);
  const endHour = Math.floor(to / 4);
  if (firstHour >= endHour) {
    for (let q = from; q < to; q++) groups.push(quarterGroup(q));
    return groups;
  }
  for (let q = from; q < firstHour * 4; q++) groups.push(quarterGroup(q));
  if (from === 0) groups.push(prefixGroup(endHour - 1));
  else if (endHour === HOURS_PER_DAY) groups.push(suffixGroup(firstHour));
  else for (let h = firstHour; h < endHour; h++) groups.push(hourGroup(h));
  for (let q = endHour * 4; q < to; q++) groups.push(quarterGroup(q));
  return groups;
}

type Piece = { interval: number; groups: StatGroup[] };

/**
 * Statistics of one type from the rollups (projections/records/sampleRollups): for each interval,
 * each series' count, sum, min and max, summed from the column groups of the UTC days it spans.
 * Reads one row per series and UTC day, whatever the number of samples; the embedded store adds
 * them up in SQL (ReadStore.aggregateDayRuns), so no row reaches JavaScript, only the buckets.
 * `intervals` must be ascending, contiguous and quarter-aligned (quarterAligned).
 */
export async function statsFromRollups(
  readStore: ReadStore,
  q: { userId: string; type: string; view: View; provider?: string },
  intervals: readonly Interval[],
): Promise<SeriesStat[]> {
  if (!intervals.length) return [];
  const query: DayRunsQuery = {
    filter: { user_id: q.userId, type: q.type, view: q.view, ...(q.provider !== undefined ? { provider: q.provider } : {}) },
    dayField: 'day',
    series: SERIES,
    runs: dayRuns(piecesByDay(intervals)),
  };
  const rows = readStore.aggregateDayRuns ? await readStore.aggregateDayRuns(SAMPLE_ROLLUPS, query) : await dayRunsByFind(readStore, SAMPLE_ROLLUPS, query);
  const out = rows.map(
    (r): SeriesStat => ({ interval: r.bucket, provider: r.series[0] as string, source: r.series[1] as string, unit: r.series[2] as string, count: r.count, sum: r.sum, min: r.min, max: r.max }),
  );
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return out.sort((a, b) => a.interval - b.interval || cmp(a.provider, b.provider) || cmp(a.source, b.source) || cmp(a.unit, b.unit));
}

const SERIES = ['provider', 'source', 'unit'] as const;

/** The pieces of every UTC day the intervals touch (by day number, ascending), each piece in interval order. */
function piecesByDay(intervals: readonly Interval[]): Map<number, Piece[]> {
  const pieces = new Map<number, Piece[]>();
  intervals.forEach(({ start, end }, i) => {
    for (let d = Math.floor(start / DAY_MS) * DAY_MS; d < end; d += DAY_MS) {
      const from = Math.max(start, d);
      const to = Math.min(end, d + DAY_MS);
      if (from >= to) continue;
      let list = pieces.get(d / DAY_MS);
      if (!list) pieces.set(d / DAY_MS, (list = []));
      list.push({ interval: i, groups: groupsFor((from - d) / QUARTER_MS, (to - d) / QUARTER_MS) });
    }
  });
  return pieces;
}

/**
 * Consecutive days cut the same way (the same groups in the same pieces, each piece's interval
 * the same number further than the day before's) as one run: a year of local days in a zone with
 * daylight saving is five runs, a month of hours three to five, so the query is a few range scans
 * whatever the window's length.
 */
function dayRuns(pieces: Map<number, Piece[]>): DayRun[] {
  const days = [...pieces.keys()].sort((a, b) => a - b);
  const runs: DayRun[] = [];
  let run: { first: number; last: number; stride: number | null; pieces: Piece[] } | null = null;
  const close = () => {
    if (run) runs.push({ from: utcDayOf(run.first * DAY_MS), to: utcDayOf(run.last * DAY_MS), stride: run.stride ?? 0, pieces: run.pieces.map((p) => ({ bucket: p.interval, groups: p.groups.map(statColumnsOf) })) });
  };
  for (const d of days) {
    const ps = pieces.get(d)!;
    if (run && d === run.last + 1 && ps.length === run.pieces.length) {
      const elapsed: number = d - run.first;
      const stride: number = run.stride ?? ps[0]!.interval - run.pieces[0]!.interval;
      const same = ps.every((p, j): boolean => {
        const o = run!.pieces[j]!;
        return p.interval === o.interval + stride * elapsed && p.groups.length === o.groups.length && p.groups.every((g, k) => g === o.groups[k]);
      });
      if (same) {
        run.last = d;
        run.stride = stride;
        continue;
      }
    }
    close();
    run = { first: d, last: d, stride: null, pieces: ps };
  }
  close();
  return runs;
}
