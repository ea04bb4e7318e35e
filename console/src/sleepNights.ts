import type { SleepSession } from './types.js';

/** How far back from the latest session the default night is looked for. */
export const RECENT_NIGHTS_MS = 48 * 3_600_000;

/** A session's sleep: the time asleep its source reported, else its time in bed. */
export function sleptSeconds(s: SleepSession): number {
  // A source that reported no time asleep (0) is judged by its time in bed.
  return s.total_sleep_seconds || Math.max(0, (Date.parse(s.bedtime_end) - Date.parse(s.bedtime_start)) / 1000);
}

/**
 * The night a user's page opens on: the longest session among those ending in the 48 hours up to
 * the latest session's end. The latest session alone is often an afternoon nap (issue 36 saw a
 * 30-minute one chosen over the night before); 48 hours keep the choice on the last night or two,
 * never a long night from weeks ago. Ties go to the later session.
 */
export function defaultNight(sessions: readonly SleepSession[]): SleepSession | undefined {
  if (sessions.length === 0) return undefined;
  const latestEnd = Math.max(...sessions.map((s) => Date.parse(s.bedtime_end)));
  let best: SleepSession | undefined;
  for (const s of sessions) {
    if (latestEnd - Date.parse(s.bedtime_end) > RECENT_NIGHTS_MS) continue;
    if (!best || sleptSeconds(s) > sleptSeconds(best) || (sleptSeconds(s) === sleptSeconds(best) && Date.parse(s.bedtime_end) > Date.parse(best.bedtime_end))) best = s;
  }
  return best;
}
