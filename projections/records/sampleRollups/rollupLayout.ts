import type { Stat } from '../../../src/readstore/dayRuns.js';
import type { StatColumns } from '../../../src/readstore/readStore.js';

/**
 * The shape of a statistics rollup row: one per user, type, series (provider, source, unit), UTC
 * day and view. A row answers any part of its day in a few columns, so that statistics cost in
 * proportion to the answer's buckets, never to samples:
 *
 * - `q<i>`: the i-th quarter hour of the day (0..95) alone. Every UTC offset in use since 1972 is a
 *   whole number of quarter hours, so a bucket boundary of any zone falls on a quarter boundary;
 * - `h<i>`: the i-th hour alone (a local hour of a whole-hour zone is one UTC hour);
 * - `p<i>`: the day from midnight UTC through the end of hour i (`p23` is the whole day);
 * - `s<i>`: the day from the start of hour i to the next midnight UTC.
 *
 * A local day of any zone is then a suffix of one UTC day and a prefix of the next, each one or
 * two column groups (plus up to three quarters where the offset is not whole hours). Each group is
 * four columns: count, sum, min, max (`<group>c`, `s`, `n`, `x`); a group with no samples is
 * absent. min and max are why prefixes and suffixes are stored at all: they cannot be subtracted.
 */
export const QUARTERS_PER_DAY = 96;
export const HOURS_PER_DAY = 24;

export type StatGroup = string;
export type { Stat };

export const quarterGroup = (i: number): StatGroup => `q${i}`;
export const hourGroup = (i: number): StatGroup => `h${i}`;
export const prefixGroup = (hour: number): StatGroup => `p${hour}`;
export const suffixGroup = (hour: number): StatGroup => `s${hour}`;
/** The whole day's group (coverage counts read it). */
export const DAY_GROUP = prefixGroup(HOURS_PER_DAY - 1);

const SUFFIXES = ['c', 's', 'n', 'x'] as const;

export const groupColumns = (g: StatGroup): string[] => SUFFIXES.map((s) => `${g}${s}`);

/** The four columns of a group, named. */
export const statColumnsOf = (g: StatGroup): StatColumns => ({ count: `${g}c`, sum: `${g}s`, min: `${g}n`, max: `${g}x` });

/**
 * Column order matters on the embedded store: a row of a dense day is several KiB and spills into
 * overflow pages, and SQLite reads a column by walking the record from its start. Day answers read
 * prefixes and suffixes, hour answers hours: those come first, the quarters (ragged ends) last.
 */
export const ROLLUP_GROUPS: readonly StatGroup[] = [
  ...Array.from({ length: HOURS_PER_DAY }, (_, i) => prefixGroup(i)),
  ...Array.from({ length: HOURS_PER_DAY }, (_, i) => suffixGroup(i)),
  ...Array.from({ length: HOURS_PER_DAY }, (_, i) => hourGroup(i)),
  ...Array.from({ length: QUARTERS_PER_DAY }, (_, i) => quarterGroup(i)),
];

export const ROLLUP_STAT_COLUMNS: readonly string[] = ROLLUP_GROUPS.flatMap(groupColumns);

export function writeGroup(doc: Record<string, unknown>, g: StatGroup, s: Stat | null): void {
  if (!s || s.count === 0) return;
  doc[`${g}c`] = s.count;
  doc[`${g}s`] = s.sum;
  doc[`${g}n`] = s.min;
  doc[`${g}x`] = s.max;
}
