import type { ReadStore } from '../../src/readstore/readStore.js';
import { utcDayOf } from '../../projections/records/recordDoc.js';
import { SAMPLE_ROLLUPS } from '../../projections/records/sampleRollups/dayRollup.js';
import { addQuarters, QUARTER_MS, QUARTERS_FIELD, type Stat } from '../../projections/records/sampleRollups/rollupLayout.js';
import type { View } from './view.js';

const DAY_MS = 86_400_000;

/** One answer interval [start, end) in epoch ms, quarter-aligned. */
export type Interval = { start: number; end: number };

export type SeriesStat = { interval: number; provider: string; source: string; unit: string } & Stat;

/** True when every boundary falls on a UTC quarter hour, so rollups can answer (offsets since 1972 all do). */
export const quarterAligned = (intervals: readonly Interval[]): boolean => intervals.every((i) => i.start % QUARTER_MS === 0 && i.end % QUARTER_MS === 0);

/** A UTC day the answer reads, with its pieces: triples (from, to, interval), the quarters [from, to) of the day that belong to that interval. */
type Day = { day: string; dayMs: number; pieces: number[] };

type RollupRow = { _id: string; day: string; provider: string; source: string; unit: string; quarters: unknown };

/** One series' count, sum, min and max by interval (`stats[4i..4i+3]`; count 0: no samples). */
type Series = { provider: string; source: string; unit: string; stats: Float64Array };

/**
 * Statistics of one type from the rollups (projections/records/sampleRollups): for each interval,
 * each series' count, sum, min and max, added up from the quarter hours of the UTC days it spans.
 * Reads one row per series and UTC day, whatever the number of samples, and visits each present
 * quarter of a row once (addQuarters: a row's pieces, the quarters of each interval it holds, are
 * consecutive runs). The same read and the same arithmetic on every store; days are added in ascending order
 * whatever order the store answers in, so a sum is the same on every store and every time.
 * `intervals` must be ascending, contiguous and quarter-aligned (quarterAligned). Answers in
 * order of interval, provider, source, unit.
 */
export async function statsFromRollups(
  readStore: ReadStore,
  q: { userId: string; type: string; view: View; provider?: string },
  intervals: readonly Interval[],
): Promise<SeriesStat[]> {
  if (!intervals.length) return [];
  const days = piecesByDay(intervals);
  const rows = await readStore.find<RollupRow>(SAMPLE_ROLLUPS, {
    filter: { user_id: q.userId, type: q.type, view: q.view, ...(q.provider !== undefined ? { provider: q.provider } : {}), day: { $gte: days[0]!.day, $lte: days[days.length - 1]!.day } },
    // The index's order (rollup index: `_id` after `day`), so the embedded store sorts nothing.
    sort: [['day', 1]],
    fields: FIELDS,
  });
  const byDay = new Map<string, RollupRow[]>();
  for (const row of rows) {
    const list = byDay.get(row.day);
    if (list) list.push(row);
    else byDay.set(row.day, [row]);
  }
  const series = new Map<string, Series>();
  for (const { day, pieces } of days) {
    for (const row of byDay.get(day) ?? []) {
      const key = `${row.provider}\u0000${row.source}\u0000${row.unit}`;
      let s = series.get(key);
      if (!s) series.set(key, (s = { provider: row.provider, source: row.source, unit: row.unit, stats: new Float64Array(4 * intervals.length) }));
      addQuarters(row.quarters, pieces, s.stats);
    }
  }
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const ordered = [...series.values()].sort((a, b) => cmp(a.provider, b.provider) || cmp(a.source, b.source) || cmp(a.unit, b.unit));
  const out: SeriesStat[] = [];
  for (let i = 0; i < intervals.length; i++) {
    for (const { provider, source, unit, stats } of ordered) {
      if (stats[4 * i]! > 0) out.push({ interval: i, provider, source, unit, count: stats[4 * i]!, sum: stats[4 * i + 1]!, min: stats[4 * i + 2]!, max: stats[4 * i + 3]! });
    }
  }
  return out;
}

const FIELDS = ['day', 'provider', 'source', 'unit', QUARTERS_FIELD] as const;

/** The UTC days the intervals touch, ascending, each with its pieces in ascending order. */
function piecesByDay(intervals: readonly Interval[]): Day[] {
  const days: Day[] = [];
  intervals.forEach(({ start, end }, i) => {
    for (let d = Math.floor(start / DAY_MS) * DAY_MS; d < end; d += DAY_MS) {
      const from = Math.max(start, d);
      const to = Math.min(end, d + DAY_MS);
      if (from >= to) continue;
      let last = days[days.length - 1];
      if (!last || last.dayMs !== d) days.push((last = { day: utcDayOf(d), dayMs: d, pieces: [] }));
      last.pieces.push((from - d) / QUARTER_MS, (to - d) / QUARTER_MS, i);
    }
  });
  return days;
}
