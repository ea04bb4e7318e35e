import { findQuantityType } from './quantityCatalog.js';

/**
 * The longest interval a normalised record of each kind may span (issue 20, docs/decisions.md
 * "Record intervals"). Records outside these bounds are rejected at normalisation
 * (commands/ingestion/recordBounds.ts), so they are also what the merged view may assume: its
 * neighbour scans reach back by these constants, never by the data (src/merge/).
 *
 * - instant: a measurement at one moment (body measurements): start equals end.
 * - count: an amount over an interval (steps, energy, distance, nutrients): at most 36 hours.
 * - measurement: a reading, a nightly figure, a meal, an ECG, a beat series: at most 36 hours.
 * - session: sleep sessions and their phases, workouts, category samples (sleep stages, mindful
 *   sessions, symptoms, events): at most 48 hours.
 * - state: category types that describe a condition lasting months (pregnancy, lactation,
 *   contraception, the cycle deviations HealthKit reports over months): at most 3 years, and the
 *   end may be planned (a due date), so only the start must not lie ahead of the receipt.
 *
 * The quality flag `implausible_duration` (a sleep session over 16 hours, a workout over 24 hours,
 * contracts §15) is a softer rule inside these hard limits: such records are stored and flagged.
 */
export type IntervalClass = 'instant' | 'count' | 'measurement' | 'session' | 'state';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export const MAX_SPAN_MS: Readonly<Record<IntervalClass, number>> = {
  instant: 0,
  count: 36 * HOUR_MS,
  measurement: 36 * HOUR_MS,
  session: 48 * HOUR_MS,
  state: 3 * 366 * DAY_MS,
};

/** The earliest instant any record may touch: nothing a wearable or an app recorded is older. */
export const EARLIEST_RECORD_MS = Date.UTC(1900, 0, 1);
/** How far after its receipt a record may end: a local date ahead of UTC, a clock slightly ahead. */
export const FUTURE_SLACK_MS = DAY_MS;

/** HealthKit category types (canonical names) that describe states lasting months or years. */
const STATE_CATEGORIES: ReadonlySet<string> = new Set([
  'pregnancy',
  'lactation',
  'contraceptive',
  'infrequent_menstrual_cycles',
  'irregular_menstrual_cycles',
  'persistent_intermenstrual_bleeding',
  'prolonged_menstrual_periods',
]);

/** Interval class of a quantity type: by the catalog's match rule; unknown types are measurements. */
export function quantityClass(type: string): IntervalClass {
  const match = findQuantityType(type)?.match;
  if (match === 'body') return 'instant';
  if (match === 'count') return 'count';
  return 'measurement';
}

export function categoryClass(type: string): IntervalClass {
  return STATE_CATEGORIES.has(type) ? 'state' : 'session';
}

export const quantityMaxSpanMs = (type: string): number => MAX_SPAN_MS[quantityClass(type)];
export const categoryMaxSpanMs = (type: string): number => MAX_SPAN_MS[categoryClass(type)];
