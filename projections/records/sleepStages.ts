import type { SleepSessionRecord } from '../../commands/ingestion/records.js';

/** The phases that are sleep stages; `asleep` (unspecified sleep), `awake` and `in_bed` are not. */
const STAGES: ReadonlySet<string> = new Set(['deep', 'rem', 'light']);

/** A stored session's stage durations: null where the source reported nothing (events always carry numbers). */
export type StageDurations = { deep_sleep_seconds: number | null; rem_sleep_seconds: number | null; light_sleep_seconds: number | null; awake_seconds: number | null };

/**
 * The stage durations a session is read with (contracts §17). A session whose source reported no
 * stages (only asleep or unspecified stretches: an Apple night before watchOS 9, a Samsung session
 * without a stage file, a Fitbit `classic` log) has no phase that is a stage and zero for every
 * stage total; its deep, REM and light durations are null, not 0, so nobody reads "no deep sleep".
 * Its awake time stays a number when the source reported any (Fitbit's classic logs count awake
 * and restless time); otherwise it is null too. A night with any stage keeps its numbers, 0 for a
 * stage absent from it. The rule reads the event alone, so stored events written before it read
 * the same after `projections rebuild sleep`, and decoders need not know it.
 */
export function stageDurations(r: SleepSessionRecord): StageDurations {
  const { deep_sleep_seconds: deep, rem_sleep_seconds: rem, light_sleep_seconds: light, awake_seconds: awake } = r;
  const staged = r.phases.some((p) => STAGES.has(p.phase)) || deep !== 0 || rem !== 0 || light !== 0;
  if (staged) return { deep_sleep_seconds: deep, rem_sleep_seconds: rem, light_sleep_seconds: light, awake_seconds: awake };
  const awakeReported = r.phases.some((p) => p.phase === 'awake') || awake !== 0;
  return { deep_sleep_seconds: null, rem_sleep_seconds: null, light_sleep_seconds: null, awake_seconds: awakeReported ? awake : null };
}
