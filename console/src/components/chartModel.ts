import { isoParts } from '../format.js';
import type { Bucket, Stats } from '../types.js';

export type Interval = 'day' | 'hour';
export type Aggregation = 'sum' | 'avg';

/** A bucket's figure: counts add up (steps, energy), readings average (heart rate), as the catalog says. */
export const figure = (b: Bucket, aggregation: Aggregation) => (aggregation === 'sum' ? b.sum : b.avg);

export const seriesKey = (b: Bucket) => (b.source && b.source !== b.provider ? `${b.provider} · ${b.source}` : b.provider);

/**
 * The merged view of one bucket. Usually one row (one source wins the whole bucket); when the
 * winner changes inside a bucket the merged answer has a row per source, combined here the way the
 * metric combines (sum, or the count-weighted mean). The table lists the rows as the API answers.
 */
function combined(rows: Bucket[], aggregation: Aggregation): number {
  const sum = rows.reduce((s, b) => s + b.sum, 0);
  if (aggregation === 'sum') return sum;
  const count = rows.reduce((s, b) => s + b.count, 0);
  return count ? sum / count : Number.NaN;
}

export type ChartRow = { start: string; merged: Bucket[]; mergedValue: number | null; bySource: (Bucket | null)[]; partial: boolean };

export type ChartModel = {
  sources: string[];
  rows: ChartRow[];
  /** Buckets the merged view shows per winning source. */
  wins: Map<string, number>;
  unit: string;
  /** Pairs of bucket starts with no bucket between them although the interval has some: the line breaks there. */
  gaps: [before: string, after: string][];
};

/**
 * Two bucket starts (written with tz's offset, as the API answers) are neighbours when no interval
 * lies between them: the next local day, or the next hour. A day's length varies across a change of
 * offset, so days are compared by their local date, never by a count of seconds.
 */
export function adjacent(a: string, b: string, interval: Interval): boolean {
  if (interval === 'hour') return Date.parse(b) - Date.parse(a) <= 3_600_000;
  const next = new Date(Date.parse(`${a.slice(0, 10)}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  return b.slice(0, 10) <= next;
}

/**
 * The bucket still filling at `now`: the local day (or hour) that contains it. Sources report at
 * different times, so its figures are partial until the interval is over and every source is in.
 */
export function isCurrentBucket(start: string, interval: Interval, tz: string, now: number): boolean {
  const t = Date.parse(start);
  if (interval === 'hour') return t <= now && now < t + 3_600_000;
  return t <= now && start.slice(0, 10) === isoParts(now, tz).date;
}

export function buildModel(merged: Stats, all: Stats, aggregation: Aggregation, now: number): ChartModel {
  const interval = all.interval;
  const starts = [...new Set([...merged.buckets, ...all.buckets].map((b) => b.start))].sort((a, b) => Date.parse(a) - Date.parse(b));
  const sources = [...new Set(all.buckets.map(seriesKey))].sort();
  const mergedBy = new Map<string, Bucket[]>();
  for (const b of merged.buckets) mergedBy.set(b.start, [...(mergedBy.get(b.start) ?? []), b]);
  const allBy = new Map(all.buckets.map((b) => [`${b.start}|${seriesKey(b)}`, b]));
  const rows = starts.map((start): ChartRow => {
    const m = (mergedBy.get(start) ?? []).slice().sort((a, b) => b.count - a.count);
    return {
      start,
      merged: m,
      mergedValue: m.length ? combined(m, aggregation) : null,
      bySource: sources.map((s) => allBy.get(`${start}|${s}`) ?? null),
      partial: isCurrentBucket(start, interval, all.tz, now),
    };
  });
  const wins = new Map<string, number>();
  for (const r of rows) for (const b of r.merged) wins.set(seriesKey(b), (wins.get(seriesKey(b)) ?? 0) + 1);
  const gaps: [string, string][] = [];
  for (let i = 1; i < starts.length; i++) if (!adjacent(starts[i - 1]!, starts[i]!, interval)) gaps.push([starts[i - 1]!, starts[i]!]);
  return { sources, rows, wins, gaps, unit: all.buckets[0]?.unit ?? merged.buckets[0]?.unit ?? '' };
}

export type LineData = {
  xs: number[];
  /** Per line (merged first, then each source): its figure per point, null where the line breaks. */
  lines: (number | null)[][];
  /** Per line: only the partial bucket and the point before it (when adjacent), drawn dotted and hollow. */
  partialLines: (number | null)[][] | null;
  /** Index of each row in xs (gap points have no row). */
  rowAt: number[];
};

/**
 * What uPlot draws. A missing bucket gets a null point, so the line breaks instead of bridging
 * the hole with a straight segment (uPlot's spanGaps stays false). The bucket still filling is
 * taken out of the lines and drawn on its own, dotted and hollow, so a half-reported day does not
 * read as a fall.
 */
export function lineData(model: ChartModel, aggregation: Aggregation, interval: Interval): LineData {
  const step = interval === 'hour' ? 3600 : 86_400;
  const value = (r: ChartRow, k: number): number | null => {
    if (k === 0) return r.mergedValue;
    const b = r.bySource[k - 1];
    return b ? figure(b, aggregation) : null;
  };
  const n = model.sources.length + 1;
  const hasPartial = model.rows.some((r) => r.partial);
  const xs: number[] = [];
  const lines: (number | null)[][] = Array.from({ length: n }, () => []);
  const partialLines: (number | null)[][] = Array.from({ length: n }, () => []);
  const rowAt: number[] = [];
  model.rows.forEach((r, i) => {
    const x = Date.parse(r.start) / 1000;
    const next = model.rows[i + 1];
    const joinsPartial = next?.partial === true && adjacent(r.start, next.start, interval);
    rowAt.push(xs.length);
    xs.push(x);
    for (let k = 0; k < n; k++) {
      const v = value(r, k);
      lines[k]!.push(r.partial ? null : v);
      partialLines[k]!.push(r.partial || joinsPartial ? v : null);
    }
    if (next && !adjacent(r.start, next.start, interval)) {
      xs.push(x + step);
      for (let k = 0; k < n; k++) {
        lines[k]!.push(null);
        partialLines[k]!.push(null);
      }
    }
  });
  return { xs, lines, partialLines: hasPartial ? partialLines : null, rowAt };
}
