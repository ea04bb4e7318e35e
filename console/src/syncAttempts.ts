import { plural } from './format.js';
import type { SyncRun } from './types.js';

/**
 * A sync run's attempts in words. The API's `attempts` counts failed attempts only (spec "Sync
 * run": "failed attempts so far"), so a run that succeeded at once has 0 of them: it made one
 * attempt, not none. "1 attempt", "3 attempts (2 failed)", "attempt 2 running (1 failed)",
 * "2 failed attempts", "not started".
 */
export function syncAttempts(r: Pick<SyncRun, 'status' | 'attempts' | 'started_at'>): string {
  const failed = r.attempts;
  switch (r.status) {
    case 'succeeded':
      return failed ? `${plural(failed + 1, 'attempt')} (${failed} failed)` : '1 attempt';
    case 'running':
      return `attempt ${failed + 1} running${failed ? ` (${failed} failed)` : ''}`;
    case 'queued':
      return failed ? plural(failed, 'failed attempt') : 'not started';
    case 'cancelled':
      return failed ? plural(failed, 'failed attempt') : r.started_at ? '1 attempt (cancelled)' : 'not started';
    default:
      // retrying, rate_limited, failed: every attempt so far failed (a run refused at once may record none).
      return plural(Math.max(failed, r.started_at ? 1 : 0), 'failed attempt');
  }
}
