/**
 * Heart rate variability from a heartbeat series (pure; the projection stores the results).
 *
 * Beats are times in seconds from the series' start. The RR interval ending at beat i is
 * `(offset_i − offset_{i−1}) × 1000` ms, rounded to the microsecond. It does not exist for the
 * first beat, nor for a beat `preceded_by_gap` (the time since the previous beat spans missing
 * data, so it is no RR interval).
 *
 * - RMSSD = sqrt( (1/m) · Σ (RR_i − RR_{i−1})² ) over the m pairs of successive RR intervals,
 *   i.e. intervals ending at adjacent beats, both existing (a gap breaks the succession).
 *   Null with fewer than 2 RR intervals (or no successive pair).
 * - SDNN = sqrt( (1/n) · Σ (RR_i − mean)² ) over the n RR intervals: the population standard
 *   deviation (divisor n, not n − 1). Null with fewer than 3 RR intervals.
 */
export type Beat = { offset_s: number; preceded_by_gap: boolean };

export type HrvFigures = { rmssd_ms: number | null; sdnn_ms: number | null };

/** Beats in time order (stable for equal offsets). */
export function orderedBeats<B extends Beat>(beats: readonly B[]): B[] {
  return beats
    .map((b, i) => ({ b, i }))
    .sort((x, y) => x.b.offset_s - y.b.offset_s || x.i - y.i)
    .map((x) => x.b);
}

/** RR interval (ms) ending at each beat of `ordered`, null where none exists. */
export function rrIntervalsMs(ordered: readonly Beat[]): (number | null)[] {
  return ordered.map((b, i) => {
    if (i === 0 || b.preceded_by_gap) return null;
    return Math.round((b.offset_s - ordered[i - 1]!.offset_s) * 1_000_000) / 1000;
  });
}

/** RMSSD and SDNN (see above) from the per-beat RR intervals of `rrIntervalsMs`. */
export function hrvFigures(rr: readonly (number | null)[]): HrvFigures {
  const values = rr.filter((v): v is number => v !== null);
  let sumSq = 0;
  let pairs = 0;
  for (let i = 1; i < rr.length; i++) {
    const a = rr[i - 1];
    const b = rr[i];
    if (a === null || a === undefined || b === null || b === undefined) continue;
    sumSq += (b - a) ** 2;
    pairs++;
  }
  const rmssd = values.length >= 2 && pairs > 0 ? Math.sqrt(sumSq / pairs) : null;
  let sdnn: number | null = null;
  if (values.length >= 3) {
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    sdnn = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length);
  }
  return { rmssd_ms: rmssd, sdnn_ms: sdnn };
}
