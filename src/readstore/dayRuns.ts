import type { DayRun, DayRunsQuery, DayRunsRow, Doc, ReadStore, Scalar, StatColumns } from './readStore.js';

const DAY_MS = 86_400_000;

/** The day number (days since the epoch) of a `YYYY-MM-DD` day. */
export const dayNumber = (day: string): number => Date.parse(`${day}T00:00:00Z`) / DAY_MS;

/** Every field a query reads of a document. */
export function dayRunsFields(q: DayRunsQuery): string[] {
  const fields = new Set<string>([q.dayField, ...q.series]);
  for (const run of q.runs) for (const p of run.pieces) for (const g of p.groups) for (const f of [g.count, g.sum, g.min, g.max]) fields.add(f);
  return [...fields];
}

/** The run holding `day` (runs ascending, not overlapping), or null. */
function runOf(runs: readonly DayRun[], day: string): DayRun | null {
  let lo = 0;
  let hi = runs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (runs[mid]!.to < day) lo = mid + 1;
    else hi = mid;
  }
  const run = runs[lo];
  return run && run.from <= day ? run : null;
}

/**
 * The meaning of ReadStore.aggregateDayRuns, for a store without it (MongoDB): one find of the
 * runs' days, each document's pieces added up in JavaScript, group by group in the order given.
 */
export async function dayRunsByFind(store: Pick<ReadStore, 'find'>, collection: string, q: DayRunsQuery): Promise<DayRunsRow[]> {
  if (!q.runs.length) return [];
  const filter = { ...q.filter, [q.dayField]: { $gte: q.runs[0]!.from, $lte: q.runs[q.runs.length - 1]!.to } };
  const docs = await store.find<Doc>(collection, { filter, fields: dayRunsFields(q) });
  const out = new Map<string, DayRunsRow>();
  for (const doc of docs) {
    const day = doc[q.dayField];
    const run = typeof day === 'string' ? runOf(q.runs, day) : null;
    if (!run) continue;
    const offset = (dayNumber(day as string) - dayNumber(run.from)) * run.stride;
    const series = q.series.map((f) => (doc[f] ?? null) as Scalar);
    for (const piece of run.pieces) {
      let s: Stat | null = null;
      for (const g of piece.groups) s = addStat(s, statOf(doc, g));
      if (s) addToBucket(out, piece.bucket + offset, series, s);
    }
  }
  return [...out.values()];
}

/** Adds `s` into the row of its bucket and series in `out`, made on first use. */
function addToBucket(out: Map<string, DayRunsRow>, bucket: number, series: Scalar[], s: Stat): void {
  const key = `${bucket}\u0000${series.join('\u0000')}`;
  const acc = out.get(key);
  if (acc) addStat(acc, s);
  else out.set(key, { bucket, series, count: s.count, sum: s.sum, min: s.min, max: s.max });
}

/**
 * Rows of several statements over disjoint runs (a store splits a long list of runs): a bucket
 * at the border of two of them is added together.
 */
export function mergeDayRunsRows(parts: readonly DayRunsRow[][]): DayRunsRow[] {
  if (parts.length === 1) return parts[0]!;
  const out = new Map<string, DayRunsRow>();
  for (const rows of parts) for (const r of rows) addToBucket(out, r.bucket, r.series, r);
  return [...out.values()];
}

export type Stat = { count: number; sum: number; min: number; max: number };

function statOf(doc: Doc, g: StatColumns): Stat | null {
  const count = doc[g.count];
  if (typeof count !== 'number' || count === 0) return null;
  return { count, sum: doc[g.sum] as number, min: doc[g.min] as number, max: doc[g.max] as number };
}

/** Adds `b` into `a` (a fresh accumulator when `a` is null). */
export function addStat<T extends Stat>(a: T | null, b: Stat | null): T | null {
  if (!b) return a;
  if (!a) return { ...b } as T;
  a.count += b.count;
  a.sum += b.sum;
  if (b.min < a.min) a.min = b.min;
  if (b.max > a.max) a.max = b.max;
  return a;
}
