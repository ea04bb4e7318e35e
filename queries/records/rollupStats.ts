import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import { dayStartMs, utcDayOf } from '../../projections/records/recordDoc.js';
import { SAMPLE_ROLLUPS, type RollupDoc } from '../../projections/records/sampleRollups/dayRollup.js';
import {
  combine,
  groupColumns,
  hourGroup,
  HOURS_PER_DAY,
  prefixGroup,
  quarterGroup,
  QUARTERS_PER_DAY,
  readGroup,
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
 * Reads one row per series and UTC day, whatever the number of samples. `intervals` must be
 * ascending, contiguous and quarter-aligned (quarterAligned).
 */
export async function statsFromRollups(
  readStore: ReadStore,
  q: { userId: string; type: string; view: View; provider?: string },
  intervals: readonly Interval[],
): Promise<SeriesStat[]> {
  if (!intervals.length) return [];
  // Pieces by UTC day, counted from the epoch (no date formatting per interval).
  const pieces = new Map<number, Piece[]>();
  const groups = new Set<StatGroup>();
  intervals.forEach(({ start, end }, i) => {
    for (let d = Math.floor(start / DAY_MS) * DAY_MS; d < end; d += DAY_MS) {
      const from = Math.max(start, d);
      const to = Math.min(end, d + DAY_MS);
      if (from >= to) continue;
      const g = groupsFor((from - d) / QUARTER_MS, (to - d) / QUARTER_MS);
      for (const x of g) groups.add(x);
      let list = pieces.get(d / DAY_MS);
      if (!list) pieces.set(d / DAY_MS, (list = []));
      list.push({ interval: i, groups: g });
    }
  });
  const filter: Filter = {
    user_id: q.userId,
    type: q.type,
    view: q.view,
    day: { $gte: utcDayOf(intervals[0]!.start), $lte: utcDayOf(intervals[intervals.length - 1]!.end - 1) },
    ...(q.provider !== undefined ? { provider: q.provider } : {}),
  };
  const rows = await readStore.find<RollupDoc>(SAMPLE_ROLLUPS, { filter, fields: ['day', 'provider', 'source', 'unit', ...[...groups].flatMap(groupColumns)] });
  const out = new Map<string, SeriesStat>();
  for (const row of rows) {
    for (const piece of pieces.get(dayStartMs(row.day) / DAY_MS) ?? []) {
      let s: Stat | null = null;
      for (const g of piece.groups) s = combine(s, readGroup(row, g));
      if (!s) continue;
      const key = `${piece.interval}\u0000${row.provider}\u0000${row.source}\u0000${row.unit}`;
      const acc = out.get(key);
      if (acc) combine(acc, s);
      else out.set(key, { interval: piece.interval, provider: row.provider, source: row.source, unit: row.unit, ...s });
    }
  }
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return [...out.values()].sort((a, b) => a.interval - b.interval || cmp(a.provider, b.provider) || cmp(a.source, b.source) || cmp(a.unit, b.unit));
}
