/**
 * Health Connect keeps an exercise session's totals in other records: the steps, distance, active
 * energy and heart rate the same app wrote during it. As device-b does for the JSON upload, a
 * workout takes the interval records of its app that lie wholly inside it, and the heart-rate
 * samples of its app within it; the tables are read once each and every value is added to the
 * workouts it falls in (found by binary search), so the cost follows the rows, not rows × workouts.
 */

export type SessionSpan = { rowId: number; pkg: string; start: number; end: number };
export type Summary = { steps: number | null; distance: number | null; energy: number | null; hrSum: number; hrN: number; hrMax: number };

type Group = { list: (SessionSpan & { summary: Summary })[]; maxDuration: number };

export class WorkoutSummaries {
  private readonly byPkg = new Map<string, Group>();
  private readonly byRow = new Map<number, Summary>();

  constructor(spans: readonly SessionSpan[]) {
    for (const s of spans) {
      let g = this.byPkg.get(s.pkg);
      if (!g) this.byPkg.set(s.pkg, (g = { list: [], maxDuration: 0 }));
      const summary: Summary = { steps: null, distance: null, energy: null, hrSum: 0, hrN: 0, hrMax: -Infinity };
      g.list.push({ ...s, summary });
      g.maxDuration = Math.max(g.maxDuration, s.end - s.start);
      this.byRow.set(s.rowId, summary);
    }
    for (const g of this.byPkg.values()) g.list.sort((a, b) => a.start - b.start || a.rowId - b.rowId);
  }

  get empty(): boolean {
    return this.byRow.size === 0;
  }

  /** An interval record of `pkg`: counted in every workout of the app that contains it whole. */
  add(what: 'steps' | 'distance' | 'energy', pkg: string | null, start: number, end: number, value: number): void {
    for (const w of this.containing(pkg, start, end)) w.summary[what] = round12((w.summary[what] ?? 0) + value);
  }

  addHeartRate(pkg: string | null, t: number, bpm: number): void {
    for (const w of this.containing(pkg, t, t)) {
      w.summary.hrSum += bpm;
      w.summary.hrN++;
      w.summary.hrMax = Math.max(w.summary.hrMax, bpm);
    }
  }

  of(rowId: number): Summary | undefined {
    return this.byRow.get(rowId);
  }

  private containing(pkg: string | null, s: number, e: number) {
    const g = this.byPkg.get(pkg ?? '');
    if (!g) return [];
    let lo = 0;
    let hi = g.list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (g.list[mid]!.start <= s) lo = mid + 1;
      else hi = mid;
    }
    const found = [];
    // No workout that starts before s - maxDuration can still be running at s.
    for (let i = lo - 1; i >= 0 && g.list[i]!.start >= s - g.maxDuration; i--) {
      const w = g.list[i]!;
      if (w.start <= s && e <= w.end) found.push(w);
    }
    return found;
  }
}

const round12 = (v: number) => Number(v.toPrecision(12));
