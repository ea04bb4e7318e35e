/**
 * Contracts §5: the 8 attempts go at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after
 * the previous one (about 28 hours). WEBHOOK_RETRY_SCHEDULE replaces the 8 delays.
 */
export const DEFAULT_SCHEDULE_SECONDS: readonly number[] = [0, 5, 300, 1800, 7200, 18000, 36000, 36000];
export const MAX_ATTEMPTS = 8;

export class RetrySchedule {
  readonly delaysMs: readonly number[];
  private readonly longestMs: number;

  constructor(seconds: readonly number[] = DEFAULT_SCHEDULE_SECONDS) {
    if (seconds.length !== MAX_ATTEMPTS) throw new Error(`a retry schedule has ${MAX_ATTEMPTS} entries`);
    this.delaysMs = seconds.map((s) => Math.round(s * 1000));
    this.longestMs = Math.max(...this.delaysMs);
  }

  /**
   * When attempt `failed + 1` is due, after `failed` failed attempts (null: none left, park).
   * A receiver's Retry-After (429 or 503) is honoured within the schedule: it can push the next
   * attempt later than planned, never beyond the schedule's longest step, and never adds attempts.
   */
  nextAttemptAt(failed: number, lastAttemptAt: number, retryAfterSeconds: number | null = null): number | null {
    if (failed >= MAX_ATTEMPTS) return null;
    const planned = this.delaysMs[failed]!;
    const asked = retryAfterSeconds === null ? 0 : Math.min(retryAfterSeconds * 1000, this.longestMs);
    return lastAttemptAt + Math.max(planned, asked);
  }
}
