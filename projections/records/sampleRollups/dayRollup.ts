import { hash } from 'node:crypto';
import { PackedRun, packHours, packQuarters, QUARTER_MS, QUARTERS_PER_DAY, type Stat } from './rollupLayout.js';

export const SAMPLE_ROLLUPS = 'sample_rollups';

const DAY_MS = 86_400_000;

export type RollupView = 'all' | 'merged';

/** What a rollup needs of one sample. */
export type RollupSample = {
  startMs: number;
  value: number;
  provider: string;
  source: string;
  unit: string;
  ingested_at: string;
  hidden: boolean;
  /** Its quality flags leave it out of the statistics of both views (contracts §15); `hidden` is then true too. */
  excluded: boolean;
};

export type RollupDoc = {
  _id: string;
  user_id: string;
  tenant_id: string;
  type: string;
  /** UTC date YYYY-MM-DD. */
  day: string;
  view: RollupView;
  provider: string;
  source: string;
  unit: string;
  /** Latest `ingested_at` of the series' samples that day (coverage's last_synced_at). */
  last_ingested_at: string;
  /** View `all` only: the series' samples of the day left out of the statistics by their quality flags (coverage counts them). */
  flagged?: number;
  /** The samples the day's statistics count (rollupLayout.ts). */
  count: number;
  /** The day's quarter hours, packed (rollupLayout.ts). */
  quarters: Buffer;
  /** The day's hours, packed the same way (rollupLayout.ts HOURS_FIELD). */
  hours: Buffer;
};

const rollupId = (userId: string, type: string, day: string, view: RollupView, provider: string, source: string, unit: string): string =>
  hash('sha256', [userId, type, day, view, provider, source, unit].join('\u0000'), 'base64url').slice(0, 22);

type Series = { views: Record<RollupView, (Stat | null)[]>; s: RollupSample; last: Record<RollupView, string>; flagged: number; counted: Record<RollupView, number>; fractional: boolean };

/** Adds one sample's value to quarter `q` (what addStat of a one-sample Stat does, without making one per sample and view). */
function addValue(quarters: (Stat | null)[], q: number, value: number): void {
  const a = quarters[q];
  if (!a) {
    quarters[q] = { count: 1, sum: value, min: value, max: value };
    return;
  }
  a.count += 1;
  a.sum += value;
  if (value < a.min) a.min = value;
  if (value > a.max) a.max = value;
}

/**
 * The rollup rows of one user's samples of one type on one UTC day: one per series (provider,
 * source, unit) and view (`merged` counts only samples the merged view lists; a series none of
 * whose samples are listed has no merged row). Samples whose quality flags leave them out
 * (contracts §15) count in neither view's statistics; the `all` row counts them in `flagged`
 * instead, and exists for them alone. Pure: the same samples give the same rows.
 * `samples` must all start within the day.
 */
export function rollupDay(owner: RollupOwner, samples: readonly RollupSample[]): RollupDoc[] {
  return rollupQuarters(owner, samples, null, [])!;
}

type RollupOwner = { user_id: string; tenant_id: string; type: string; day: string };

/** Quarter q of a stored row's day: [q, q + 1) into slot q (PackedRun.addQuarters). */
const EVERY_QUARTER: number[] = [];
for (let q = 0; q < QUARTERS_PER_DAY; q++) EVERY_QUARTER.push(q, q + 1, q);

/**
 * rollupDay's rows where only the quarters `affected` marks (1) changed: those are added up from
 * `samples` (every sample of the day, as the batch leaves them), the others taken from `stored`
 * (the day's rows before the batch), and `flagged` and `last_ingested_at` come from every sample
 * (no quarter holds them). The same rows as rollupDay of the samples, when `stored` is what the
 * samples outside the affected quarters gave; answers null where the stored rows cannot be that
 * (a series' counts differ from its samples', a row of a series with none: a MongoDB batch cut
 * short after the day's rows were deleted), for the caller to add up the whole day.
 * `affected` null: every quarter from the samples (rollupDay).
 */
export function rollupQuarters(owner: RollupOwner, samples: readonly RollupSample[], affected: Uint8Array | null, stored: readonly RollupDoc[]): RollupDoc[] | null {
  const dayStart = Date.parse(`${owner.day}T00:00:00Z`);
  const series = new Map<string, Series>();
  // The series of the sample before: a day's samples come series by series (block by block),
  // so most samples find theirs without the key's text and a map lookup.
  let e: Series | undefined;
  for (const x of samples) {
    if (e === undefined || e.s.provider !== x.provider || e.s.source !== x.source || e.s.unit !== x.unit) {
      const key = seriesKey(x);
      e = series.get(key);
      if (!e) series.set(key, (e = { views: { all: new Array(QUARTERS_PER_DAY).fill(null), merged: new Array(QUARTERS_PER_DAY).fill(null) }, s: x, last: { all: '', merged: '' }, flagged: 0, counted: { all: 0, merged: 0 }, fractional: false }));
    }
    const q = Math.floor((x.startMs - dayStart) / QUARTER_MS);
    if (q < 0 || q >= QUARTERS_PER_DAY) throw new Error(`sample at ${new Date(x.startMs).toISOString()} is not on ${owner.day}`);
    if (x.ingested_at > e.last.all) e.last.all = x.ingested_at;
    if (x.excluded) {
      e.flagged++;
      continue;
    }
    e.counted.all++;
    const here = affected === null || affected[q] === 1;
    if (here && !e.fractional && !Number.isInteger(x.value)) e.fractional = true;
    if (here) addValue(e.views.all, q, x.value);
    if (!x.hidden) {
      e.counted.merged++;
      if (here) addValue(e.views.merged, q, x.value);
      if (x.ingested_at > e.last.merged) e.last.merged = x.ingested_at;
    }
  }
  for (const e of series.values()) if (e.fractional) canonicalSums(e, samples, dayStart, affected);
  if (affected !== null) {
    const stats = new Float64Array(4 * QUARTERS_PER_DAY);
    for (const row of stored) {
      const mine = series.get(seriesKey(row));
      if (!mine) return null;
      const quarters = mine.views[row.view];
      stats.fill(0);
      new PackedRun(row.quarters).addQuarters(0, EVERY_QUARTER, stats);
      for (let q = 0; q < QUARTERS_PER_DAY; q++) {
        if (affected[q] === 1 || stats[4 * q] === 0) continue;
        quarters[q] = { count: stats[4 * q]!, sum: stats[4 * q + 1]!, min: stats[4 * q + 2]!, max: stats[4 * q + 3]! };
      }
    }
    for (const { views, counted } of series.values()) if (countOf(views.all) !== counted.all || countOf(views.merged) !== counted.merged) return null;
  }
  const out: RollupDoc[] = [];
  for (const { views, s, last, flagged } of series.values()) {
    for (const view of ['all', 'merged'] as const) {
      const quarters = views[view];
      if (!quarters.some((q) => q !== null) && !(view === 'all' && flagged > 0)) continue;
      out.push({
        _id: rollupId(owner.user_id, owner.type, owner.day, view, s.provider, s.source, s.unit),
        user_id: owner.user_id,
        tenant_id: owner.tenant_id,
        type: owner.type,
        day: owner.day,
        view,
        provider: s.provider,
        source: s.source,
        unit: s.unit,
        last_ingested_at: last[view],
        ...(view === 'all' ? { flagged } : {}),
        count: countOf(quarters),
        quarters: packQuarters(quarters, dayStart / DAY_MS),
        hours: packHours(quarters, dayStart / DAY_MS),
      });
    }
  }
  return out;
}

/**
 * The sums of a series' quarters that hold a fraction, added up again in ascending order of the
 * values: a sum of fractions depends on the order it is added in, and a quarter kept from the
 * stored row was added up by an earlier batch, whose samples came in another order (whole
 * numbers add up exactly in any order, so most days never come here).
 */
function canonicalSums(e: Series, samples: readonly RollupSample[], dayStart: number, affected: Uint8Array | null): void {
  const values = new Map<number, number[]>();
  for (const x of samples) {
    if (x.excluded || x.provider !== e.s.provider || x.source !== e.s.source || x.unit !== e.s.unit) continue;
    const q = Math.floor((x.startMs - dayStart) / QUARTER_MS);
    if (affected !== null && affected[q] !== 1) continue;
    // Keyed by quarter, the merged view's (listed) samples under q + QUARTERS_PER_DAY.
    for (const k of x.hidden ? [q] : [q, q + QUARTERS_PER_DAY]) {
      const list = values.get(k);
      if (list) list.push(x.value);
      else values.set(k, [x.value]);
    }
  }
  for (const [k, list] of values) {
    list.sort(byValue);
    let sum = 0;
    for (const v of list) sum += v;
    const stat = k < QUARTERS_PER_DAY ? e.views.all[k] : e.views.merged[k - QUARTERS_PER_DAY];
    stat!.sum = sum;
  }
}

const byValue = (a: number, b: number): number => a - b;

const seriesKey = (x: { provider: string; source: string; unit: string }): string => `${x.provider}\u0000${x.source}\u0000${x.unit}`;

function countOf(quarters: readonly (Stat | null)[]): number {
  let n = 0;
  for (const q of quarters) if (q) n += q.count;
  return n;
}
