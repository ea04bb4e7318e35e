import { hash } from 'node:crypto';
import { packHours, packQuarters, QUARTER_MS, QUARTERS_PER_DAY, type Stat } from './rollupLayout.js';

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

type Series = { views: Record<RollupView, (Stat | null)[]>; s: RollupSample; last: Record<RollupView, string>; flagged: number };

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
export function rollupDay(owner: { user_id: string; tenant_id: string; type: string; day: string }, samples: readonly RollupSample[]): RollupDoc[] {
  const dayStart = Date.parse(`${owner.day}T00:00:00Z`);
  const series = new Map<string, Series>();
  // The series of the sample before: a day's samples come series by series (block by block),
  // so most samples find theirs without the key's text and a map lookup.
  let e: Series | undefined;
  for (const x of samples) {
    if (e === undefined || e.s.provider !== x.provider || e.s.source !== x.source || e.s.unit !== x.unit) {
      const key = `${x.provider}\u0000${x.source}\u0000${x.unit}`;
      e = series.get(key);
      if (!e) series.set(key, (e = { views: { all: new Array(QUARTERS_PER_DAY).fill(null), merged: new Array(QUARTERS_PER_DAY).fill(null) }, s: x, last: { all: '', merged: '' }, flagged: 0 }));
    }
    const q = Math.floor((x.startMs - dayStart) / QUARTER_MS);
    if (q < 0 || q >= QUARTERS_PER_DAY) throw new Error(`sample at ${new Date(x.startMs).toISOString()} is not on ${owner.day}`);
    if (x.ingested_at > e.last.all) e.last.all = x.ingested_at;
    if (x.excluded) {
      e.flagged++;
      continue;
    }
    addValue(e.views.all, q, x.value);
    if (!x.hidden) {
      addValue(e.views.merged, q, x.value);
      if (x.ingested_at > e.last.merged) e.last.merged = x.ingested_at;
    }
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
        count: quarters.reduce((n, q) => n + (q?.count ?? 0), 0),
        quarters: packQuarters(quarters, dayStart / DAY_MS),
        hours: packHours(quarters, dayStart / DAY_MS),
      });
    }
  }
  return out;
}

