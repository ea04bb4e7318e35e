/**
 * Menstrual cycles from flow days (contracts §3): a cycle starts on a bleeding day after at least
 * two days without one (or on a day a source says a period starts); its period runs to its last
 * bleeding day; its length is the days to the next cycle's start. Days are numbered (UTC day
 * numbers of the local dates) by the caller, which knows how its dates are written.
 */

/** How heavy a flow is: several samples on one day keep the heaviest. */
export const FLOW_RANK: Readonly<Record<string, number>> = { unspecified: 1, light: 2, medium: 3, heavy: 4 };

/** Whether `flow` outweighs what a day holds so far (nothing yet: it does). */
export function heavierFlow(flow: string, than: string | null | undefined): boolean {
  return than === null || than === undefined || FLOW_RANK[flow]! > FLOW_RANK[than]!;
}

export type Cycle = {
  /** Day numbers: the first and last bleeding day, and every bleeding day in order. */
  start: number;
  last: number;
  days: number[];
  period_length_days: number;
  /** Days to the next cycle's start; null for the last one. */
  cycle_length_days: number | null;
};

/** The cycles of one source's bleeding days (ascending day numbers, each once). */
export function cyclesOf(days: readonly number[], startsPeriod: (day: number) => boolean = () => false): Cycle[] {
  const cycles: Cycle[] = [];
  let prev: number | null = null;
  for (const n of days) {
    const cur = cycles[cycles.length - 1];
    if (!cur || prev === null || n - prev - 1 >= 2 || startsPeriod(n)) cycles.push({ start: n, last: n, days: [n], period_length_days: 1, cycle_length_days: null });
    else {
      cur.last = n;
      cur.days.push(n);
    }
    prev = n;
  }
  cycles.forEach((c, i) => {
    c.period_length_days = c.last - c.start + 1;
    const next = cycles[i + 1];
    c.cycle_length_days = next ? next.start - c.start : null;
  });
  return cycles;
}
