import type { SleepPhase } from '../../../commands/ingestion/records.js';

/**
 * Sleep sessions from what sources send (contracts §3): the nights of a source's sleep samples,
 * and the time in each phase. Every format and provider that builds a session from stretches of
 * sleep (device files, providers' sleep logs, later imports) takes these, so a night and its
 * totals mean the same whatever sent them.
 */

export type Phase = SleepPhase['phase'];

/** Time per phase; `unit` said by whoever summed it (milliseconds or seconds). */
export type PhaseTotals = Record<Phase, number>;

/** The summed length of each phase's stretches, `(end - start) / per` each, in the order given. */
export function phaseTotals(stretches: Iterable<{ phase: Phase; start: number; end: number }>, per = 1): PhaseTotals {
  const totals: PhaseTotals = { deep: 0, rem: 0, light: 0, awake: 0, asleep: 0, in_bed: 0 };
  for (const s of stretches) totals[s.phase] += (s.end - s.start) / per;
  return totals;
}

/** Time asleep: every sleeping phase, not awake and not merely in bed. */
export function asleepOf(t: PhaseTotals): number {
  return t.deep + t.rem + t.light + t.asleep;
}

/** The night's vitals of a session built from sleep stretches: the stretches say nothing of them. */
export const NO_NIGHT_VITALS = { sleep_score: null, hrv_avg_ms: null, resting_hr: null, respiratory_rate: null, spo2_avg: null } as const;

/** A sleep sample of one source (`group`): its stretch in epoch milliseconds and an id that orders ties. */
export type SleepSample = { group: string; start: number; end: number; id: string };

/**
 * The nights of each source: its samples in time order (start, then end, then id), a new night
 * where a sample starts `gapMs` or more after every earlier one of the night ended. Answers the
 * nights source by source, each in time order.
 */
export function sleepNights<T extends SleepSample>(samples: readonly T[], gapMs: number): T[][] {
  const nights: T[][] = [];
  for (const group of groupsOf(samples, (s) => s.group)) {
    group.sort((a, b) => a.start - b.start || a.end - b.end || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const run of nightRuns(group.length, (k) => group[k]!.start, (k) => group[k]!.end, gapMs)) nights.push(group.slice(run.from, run.to));
  }
  return nights;
}

/**
 * Where the nights of one source's `count` samples, already in time order, begin and end (`to`
 * excluded): a new night where a sample starts `gapMs` or more after every earlier one of the
 * night ended. Samples are read by position, so a caller keeping them in columns (device-a's
 * upload) cuts the same nights without an object per sample.
 */
export function nightRuns(count: number, startAt: (k: number) => number, endAt: (k: number) => number, gapMs: number): { from: number; to: number }[] {
  const runs: { from: number; to: number }[] = [];
  let from = 0;
  let lastEnd = -Infinity;
  for (let k = 0; k < count; k++) {
    if (k > from && startAt(k) - lastEnd >= gapMs) {
      runs.push({ from, to: k });
      from = k;
      lastEnd = -Infinity;
    }
    lastEnd = Math.max(lastEnd, endAt(k));
  }
  if (count > from) runs.push({ from, to: count });
  return runs;
}

/** Items by key, in the order each key first appears. */
export function groupsOf<T>(items: Iterable<T>, keyOf: (item: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const it of items) {
    const key = keyOf(it);
    const g = groups.get(key);
    if (g) g.push(it);
    else groups.set(key, [it]);
  }
  return [...groups.values()];
}
