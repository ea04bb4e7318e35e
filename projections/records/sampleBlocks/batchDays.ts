import { utcDayOf } from '../recordDoc.js';

export const DAY_MS = 86_400_000;

/** The days of one user's type a batch needs loaded (a block session loads whole days). */
export type Need = { userId: string; type: string; days: Set<string> };

export function want(need: Map<string, Need>, userId: string, type: string, day: string): void {
  needOf(need, userId, type).days.add(day);
}

/** The days needed of (user, type), created empty when new. */
export function needOf(need: Map<string, Need>, userId: string, type: string): Need {
  const k = `${userId}\u0000${type}`;
  let n = need.get(k);
  if (!n) need.set(k, (n = { userId, type, days: new Set() }));
  return n;
}

/** The UTC days of the instants [lo, hi) (epoch ms). */
export function daysBetween(lo: number, hi: number): string[] {
  const out: string[] = [];
  for (let d = Math.floor(lo / DAY_MS), last = Math.floor((hi - 1) / DAY_MS); d <= last; d++) out.push(utcDayOf(d * DAY_MS));
  return out;
}
