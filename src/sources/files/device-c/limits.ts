import type { ParseContext } from '../../../../commands/ingestion/records.js';

/** Limits and constants (docs/formats/device-c.md "Validation"). */

/** Earliest plausible sample: devices with a lost clock report 1970 or 2000. */
export const MIN_EPOCH_S = Date.UTC(2010, 0, 1) / 1000;
/**
 * Latest plausible sample: one day after the payload was received (clock skew between band and
 * server). The receipt time, not the clock: a re-run of the job must give the same records.
 */
export const maxEpochS = (ctx: ParseContext) => Math.floor(Date.parse(ctx.receivedAt) / 1000) + 86_400;
/** Gadgetbridge activity samples are per minute. */
export const SAMPLE_SECONDS = 60;
/** More steps than this in one sample is a corrupt value (Huami stores a byte per minute). */
export const MAX_STEPS_PER_SAMPLE = 5000;
/** HEART_RATE values that mean "not measured" (ActivitySample.NOT_MEASURED, Huami's 255, 0). */
export const HR_NO_READING: ReadonlySet<number> = new Set([-1, 0, 255]);
export const HR_MIN = 20;
export const HR_MAX = 250;
/** Sleep minutes closer than this belong to the same night. */
export const NIGHT_GAP_S = 3600;
/** Nights with less sleep than this are movement noise (Gadgetbridge's own SleepAnalysis uses 5 min). */
export const MIN_SLEEP_S = 5 * 60;
/** A session from a sleep table longer than this is corrupt. */
export const MAX_SLEEP_SESSION_S = 24 * 3600;
/** A workout longer than this is corrupt. */
export const MAX_WORKOUT_S = 7 * 24 * 3600;
export const EXCERPT_BYTES = 1024;

export const STEP_UNIT = 'count';
export const HR_UNIT = 'count/min';
