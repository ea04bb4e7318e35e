/**
 * Data quality flags (contracts §15, docs/quality.md): what every stored record says about its
 * own trustworthiness, an array, empty when none.
 *
 * - `implausible_value`: a value outside the physiological range the quantity catalog gives for
 *   its type (quantityCatalog.ts `plausible`);
 * - `implausible_duration`: a sleep session over 16 hours, a workout over 24 hours;
 * - `future`: ending more than 10 minutes after the service received it;
 * - `manual`: entered by hand, by the source's own marker.
 *
 * The first three leave a record out of the merged view and of the statistics of both views; it
 * stays stored and listed with `view=all`. `manual` only informs.
 */
export const QUALITY_FLAGS = ['implausible_value', 'implausible_duration', 'future', 'manual'] as const;
export type QualityFlag = (typeof QUALITY_FLAGS)[number];

/** The flags that leave a record out of the merged view and statistics. */
export const LEAVING_OUT_FLAGS: ReadonlySet<QualityFlag> = new Set(['implausible_value', 'implausible_duration', 'future']);

export const leavesOut = (flags: readonly string[] | undefined): boolean => !!flags && flags.some((f) => LEAVING_OUT_FLAGS.has(f as QualityFlag));

const HOUR_MS = 3_600_000;
/** The longest sleep session and workout that are plausible (§15). */
export const PLAUSIBLE_SLEEP_MS = 16 * HOUR_MS;
export const PLAUSIBLE_WORKOUT_MS = 24 * HOUR_MS;
/** How long after its receipt a record may end before it is flagged `future` (§15). */
export const FUTURE_TOLERANCE_MS = 10 * 60_000;
