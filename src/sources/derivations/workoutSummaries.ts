/**
 * Workout summaries from the samples recorded during a workout (contracts §3): which workouts of
 * a source a sample falls in, and the heart rate over one. Formats whose workouts come without
 * their totals (Health Connect sessions, a provider's activity without averages) take these, so a
 * summary means the same whatever sent it.
 */

/** A workout of one source (`group`), in epoch milliseconds. */
export type WorkoutWindow = { group: string; start: number; end: number };

/**
 * The workouts of each source indexed by start, answering which ones a stretch falls in. Built
 * once per upload: a lookup is a binary search plus the workouts that may still be running.
 */
export class WorkoutWindows<W extends WorkoutWindow> {
  private readonly byGroup = new Map<string, { list: W[]; maxDur: number }>();

  constructor(workouts: readonly W[]) {
    for (const w of workouts) {
      let g = this.byGroup.get(w.group);
      if (!g) this.byGroup.set(w.group, (g = { list: [], maxDur: 0 }));
      g.list.push(w);
      g.maxDur = Math.max(g.maxDur, w.end - w.start);
    }
    for (const g of this.byGroup.values()) g.list.sort((a, b) => a.start - b.start);
  }

  has(group: string): boolean {
    return this.byGroup.has(group);
  }

  /** Workouts of the source starting at or before `e` and ending at or after `s`, i.e. overlapping [s, e]. */
  overlapping(group: string, s: number, e: number): W[] {
    const g = this.byGroup.get(group);
    if (!g) return [];
    let lo = 0;
    let hi = g.list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (g.list[mid]!.start <= e) lo = mid + 1;
      else hi = mid;
    }
    const found: W[] = [];
    // No workout starting before s - maxDur can still be running at s.
    for (let i = lo - 1; i >= 0 && g.list[i]!.start >= s - g.maxDur; i--) {
      const w = g.list[i]!;
      if (w.end >= s) found.push(w);
    }
    return found;
  }

  /** Workouts of the source that contain [s, e] entirely. */
  containing(group: string, s: number, e: number): W[] {
    return this.overlapping(group, s, e).filter((w) => w.start <= s && e <= w.end);
  }
}

/** Samples over a workout or a night (heart rate, breathing), one by one: the mean and the highest. */
export class SampleSummary {
  private sum = 0;
  private n = 0;
  private highest = -Infinity;

  add(bpm: number): void {
    this.sum += bpm;
    this.n++;
    this.highest = Math.max(this.highest, bpm);
  }

  /** Every value of a list, in order. */
  static of(values: Iterable<number>): SampleSummary {
    const s = new SampleSummary();
    for (const v of values) s.add(v);
    return s;
  }

  get count(): number {
    return this.n;
  }

  /** The mean, null without samples. */
  get mean(): number | null {
    return this.n > 0 ? this.sum / this.n : null;
  }

  /** The mean to one decimal, null without samples. */
  get mean1(): number | null {
    return this.n > 0 ? Math.round((this.sum / this.n) * 10) / 10 : null;
  }

  get max(): number | null {
    return this.n > 0 ? this.highest : null;
  }
}
