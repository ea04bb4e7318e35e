/**
 * The webhook worker's limits and the words it records (spec "Limits"): what the engine, the
 * routes and the tests share without importing the worker.
 */

/** Spec "Limits": 20 attempts kept per delivery. */
export const ATTEMPTS_KEPT = 20;
/** Spec "Limits": an endpoint that accepted nothing for 5 days is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;
export const AUTO_DISABLED_REASON = 'no delivery accepted for 5 days';
/** An attempt's error when the endpoint's sealed secret does not open (a SEALING_KEY rotation without SEALING_KEY_PREVIOUS). */
export const UNSEALABLE_ERROR = "not sent: the service's sealing keys do not open this endpoint's signing secret (incomplete SEALING_KEY rotation)";

export type WorkerLimits = {
  /** Attempts in flight to one endpoint: a slow endpoint holds only its own slots. */
  perEndpoint: number;
  /** Attempts in flight overall. */
  total: number;
  /** Due deliveries of one endpoint held in memory; the rest wait in the store. */
  queuedPerEndpoint: number;
  /** Due deliveries held in memory overall. */
  queued: number;
  /**
   * An attempt still unanswered after this long is stored as `running`; a quicker one goes from
   * `pending` to its outcome in one write (the spec names the states, not how long each is shown).
   */
  runningAfterMs: number;
};

export const DEFAULT_LIMITS: WorkerLimits = { perEndpoint: 16, total: 256, queuedPerEndpoint: 1_000, queued: 50_000, runningAfterMs: 1_000 };
