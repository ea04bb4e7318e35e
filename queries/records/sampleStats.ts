import { DateTime, FixedOffsetZone, Info, InvalidZone, type Zone } from 'luxon';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { InvalidTimeWindowError, parseTimeParam } from '../../src/shared/timeWindow.js';
import { canonicalTimeZone } from '../../src/shared/timeZones.js';
import { offsetSegments, type OffsetSegment } from '../../src/shared/zoneOffsets.js';
import type { SampleDoc } from '../../projections/records/samplesProjection.js';
import { dateOfDayNumber, pad2 } from '../../projections/records/recordDoc.js';
import type { View } from './view.js';
import { sampleChunks } from './sampleBlocks.js';
import { quarterAligned, statsFromRollups, type Interval } from './rollupStats.js';

/**
 * Spec "Sample statistics" and "Reads" rule 2: samples of one type bucketed by hour or by local
 * day in an IANA zone, one series per provider, source and unit (series are never summed).
 *
 * Choices the spec leaves open (kept here so the route and the agent tool agree):
 * - a sample falls in the bucket holding its `start_date`, whole (an interval sample spanning two
 *   buckets is not split);
 * - only buckets holding at least one sample are listed;
 * - every bucket carries count, sum, avg (sum / count), min and max whatever the type's
 *   catalog aggregation is; a caller of a counted type reads `sum`, of a reading `avg`;
 * - bucket, `start` and `end` times are written with the numeric offset of tz at that instant
 *   (`+00:00` for UTC), seconds precision.
 */
export type StatsInterval = 'hour' | 'day';

export const MAX_STATS_INTERVALS = 10_000;
/** contracts §6: `truncated` counts the answer's bucket rows (series × intervals), never samples. */
export const MAX_STATS_BUCKETS = 50_000;

export type StatsRow = { start_date: string; provider: string; source: string; unit: string; value: number };

export type StatsBucket = {
  start: string;
  provider: string;
  source: string;
  unit: string;
  count: number;
  sum: number;
  avg: number;
  min: number;
  max: number;
};

/** The widened window: whole intervals in tz, start inclusive, end exclusive. */
export type StatsWindow = { start: DateTime; end: DateTime; intervals: number };

/** Offset always numeric, so every time of one answer has the same shape. */
export const formatWithOffset = (t: DateTime): string => t.toFormat("yyyy-MM-dd'T'HH:mm:ssZZ");

export function isValidTimeZone(tz: string): boolean {
  return canonicalTimeZone(tz) !== null;
}

/**
 * The zone luxon is given for a caller's `tz`. luxon caches an IANAZone (and its Intl formatter) per
 * zone string it sees and never evicts, so it only ever sees canonical names (src/shared/timeZones.ts):
 * one entry per real zone, not one per spelling a caller sends ("europe/paris", "EUROPE/PARIS", …).
 * luxon's own specifiers that are not IANA names ("local", "UTC+5") go through as before (luxon
 * caches none of them); anything else becomes an InvalidZone, which luxon does not cache either.
 */
function zoneOf(tz: string): string | Zone {
  const canonical = canonicalTimeZone(tz);
  if (canonical !== null) return canonical;
  const lowered = tz.toLowerCase();
  if (lowered === 'local' || lowered === 'system' || lowered === 'default' || FixedOffsetZone.parseSpecifier(lowered)) return tz;
  return new InvalidZoneNamed(tz);
}
/** luxon's InvalidZone takes the name it reports; @types/luxon leaves the argument out. */
const InvalidZoneNamed = InvalidZone as unknown as new (name: string) => Zone;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A statistics time parameter: an RFC 3339 time, or a `YYYY-MM-DD` date meaning midnight in tz
 * (spec "Conventions" 2). Null when unparsable.
 */
export function parseStatsTime(value: string, tz: string): DateTime | null {
  const ms = parseTimeParam(value);
  if (ms === null) return null;
  const zone = zoneOf(tz);
  if (DATE_ONLY.test(value)) {
    // Local midnight; where a zone skips midnight, luxon moves on to the first local time that exists.
    const t = DateTime.fromISO(value, { zone });
    return t.isValid ? t : null;
  }
  const t = DateTime.fromMillis(ms, { zone });
  return t.isValid ? t : null;
}

/** Start of the interval of tz holding `t`. */
function floorTo(t: DateTime, interval: StatsInterval): DateTime {
  return t.startOf(interval);
}

/** The first interval boundary at or after `t`. */
function ceilTo(t: DateTime, interval: StatsInterval): DateTime {
  const f = floorTo(t, interval);
  return f.toMillis() === t.toMillis() ? f : nextBoundary(f, interval);
}

/** The boundary after the interval starting at `start` (a day is 23, 24 or 25 hours long). */
function nextBoundary(start: DateTime, interval: StatsInterval): DateTime {
  const next = floorTo(start.plus(interval === 'day' ? { days: 1 } : { hours: 1 }), interval);
  // Guard for zones whose clocks move by less than an hour: never stand still.
  return next.toMillis() > start.toMillis() ? next : start.plus({ hours: 1 });
}

/**
 * Parses and widens `start`/`end` to whole intervals of tz (spec "Reads" rule 2). Throws
 * InvalidTimeWindowError (a 400) for an unknown zone, an unparsable time, `end` before `start`,
 * or a widened window longer than `maxIntervals` intervals after start.
 */
export function statsWindow(
  startParam: string,
  endParam: string,
  interval: StatsInterval,
  tz: string,
  maxIntervals: number = MAX_STATS_INTERVALS,
): StatsWindow {
  if (!isValidTimeZone(tz)) throw new InvalidTimeWindowError(`tz ${tz} is not an IANA time zone`);
  const plain = datesWindow(startParam, endParam, interval, tz, maxIntervals);
  if (plain) return plain;
  const s = parseStatsTime(startParam, tz);
  const e = parseStatsTime(endParam, tz);
  if (!s) throw new InvalidTimeWindowError('start is not an RFC 3339 time or a YYYY-MM-DD date');
  if (!e) throw new InvalidTimeWindowError('end is not an RFC 3339 time or a YYYY-MM-DD date');
  if (e.toMillis() < s.toMillis()) throw new InvalidTimeWindowError('end is before start');
  const start = floorTo(s, interval);
  const end = ceilTo(e, interval);
  const limit = start.plus(interval === 'day' ? { days: maxIntervals } : { hours: maxIntervals });
  if (end.toMillis() > limit.toMillis()) {
    throw new InvalidTimeWindowError(`the window spans more than ${maxIntervals} ${interval} intervals after start`);
  }
  const intervals = interval === 'day' ? Math.round(end.diff(start, 'days').days) : Math.ceil((end.toMillis() - start.toMillis()) / 3_600_000);
  return { start, end, intervals };
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** The first local date the arithmetic below takes (the rollups' era: every offset since is whole minutes). */
const FIRST_PLAIN_DATE = '1972-01-01';

/**
 * statsWindow where both parameters are dates (`YYYY-MM-DD`, midnight in tz; since 1972) whose
 * midnights lie two days or more from any offset change of the zone, and the window is short of the
 * limit: a local midnight is then plain arithmetic on the zone's offset (zoneOffsets.ts, one binary
 * search of the year's segments), already a boundary of either interval, and the count of intervals
 * follows from the dates. The answer is the one luxon's walk gives (a midnight luxon could read two
 * ways, or that does not exist, is near a change, and left to it), at a fraction of its cost: luxon
 * asks Intl for the offset of every DateTime it makes, a dozen per window (issue 38: a fifth of a
 * statistics request's JavaScript). Null: not such a window (statsWindow takes the general path,
 * which also throws its errors).
 */
function datesWindow(startParam: string, endParam: string, interval: StatsInterval, tz: string, maxIntervals: number): StatsWindow | null {
  if (!DATE_ONLY.test(startParam) || !DATE_ONLY.test(endParam) || startParam < FIRST_PLAIN_DATE || endParam < startParam) return null;
  const localStart = parseTimeParam(startParam);
  const localEnd = parseTimeParam(endParam);
  if (localStart === null || localEnd === null) return null;
  const zone = Info.normalizeZone(zoneOf(tz));
  if (!zone.isValid) return null;
  const startOffset = steadyOffset(zone, localStart);
  const endOffset = steadyOffset(zone, localEnd);
  if (startOffset === null || endOffset === null) return null;
  const start = localStart - startOffset * 60_000;
  const end = localEnd - endOffset * 60_000;
  const intervals = interval === 'day' ? Math.round((localEnd - localStart) / DAY_MS) : Math.ceil((end - start) / HOUR_MS);
  // At the limit, luxon's calendar arithmetic decides (and throws beyond it).
  if (intervals >= maxIntervals) return null;
  return { start: DateTime.fromMillis(start, { zone }), end: DateTime.fromMillis(end, { zone }), intervals };
}

/** The zone's offset (whole minutes) at local wall time `local` (epoch ms read as UTC) when it does not change within two days of it; otherwise null. */
function steadyOffset(zone: Zone, local: number): number | null {
  // Offsets lie within ±26 hours, so the instant of `local` is inside [local - 2 days, local + 2 days].
  const from = local - 2 * DAY_MS;
  const to = local + 2 * DAY_MS;
  let offset: number | null = null;
  for (const s of offsetSegments(zone, from, to)) {
    if (s.at <= from) offset = s.offset;
    else if (s.at < to) return null;
  }
  return offset !== null && Number.isInteger(offset) ? offset : null;
}

type Acc = { startMs: number; start: string; provider: string; source: string; unit: string; count: number; sum: number; min: number; max: number };

/**
 * Incremental bucketing of samples in ascending start_date order (the order the read delivers;
 * the current interval is cached, so luxon runs once per interval, not once per row). Rows out of
 * order are still bucketed correctly, only slower.
 */
export class StatsBucketer {
  private readonly accs = new Map<string, Acc>();
  private curStart = 0;
  private curEnd = -1;
  private curLabel = '';
  private readonly zone: string | Zone;

  constructor(
    private readonly interval: StatsInterval,
    tz: string,
  ) {
    this.zone = zoneOf(tz);
  }

  add(row: StatsRow): void {
    const ms = Date.parse(row.start_date);
    if (!(ms >= this.curStart && ms < this.curEnd)) {
      const start = floorTo(DateTime.fromMillis(ms, { zone: this.zone }), this.interval);
      this.curStart = start.toMillis();
      this.curEnd = nextBoundary(start, this.interval).toMillis();
      this.curLabel = formatWithOffset(start);
    }
    accumulate(this.accs, this.curStart, this.curLabel, row);
  }

  buckets(): StatsBucket[] {
    return sortedBuckets(this.accs.values());
  }
}

/** Adds a row to its series' accumulator of the interval starting at `startMs`. */
function accumulate(accs: Map<string, Acc>, startMs: number, label: string | (() => string), row: StatsRow): void {
  const key = `${startMs}\u0000${row.provider}\u0000${row.source}\u0000${row.unit}`;
  const a = accs.get(key);
  if (a) {
    a.count++;
    a.sum += row.value;
    if (row.value < a.min) a.min = row.value;
    if (row.value > a.max) a.max = row.value;
  } else {
    const start = typeof label === 'string' ? label : label();
    accs.set(key, { startMs, start, provider: row.provider, source: row.source, unit: row.unit, count: 1, sum: row.value, min: row.value, max: row.value });
  }
}

/** Buckets ordered by start, provider, source, unit (spec "Reads" table). */
function sortedBuckets(accs: Iterable<Acc>): StatsBucket[] {
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return [...accs]
    .sort((a, b) => a.startMs - b.startMs || cmp(a.provider, b.provider) || cmp(a.source, b.source) || cmp(a.unit, b.unit))
    .map((a) => ({ start: a.start, provider: a.provider, source: a.source, unit: a.unit, count: a.count, sum: a.sum, avg: a.sum / a.count, min: a.min, max: a.max }));
}

/**
 * Pure bucketing of rows (any order; ascending start_date is fastest). Every row counts
 * (contracts §6: samples are never dropped); when the answer would hold more than `maxBuckets`
 * bucket rows it is `truncated` and holds the first `maxBuckets` in answer order.
 */
export function bucketSamples(
  rows: Iterable<StatsRow>,
  opts: { interval: StatsInterval; tz: string; maxBuckets?: number; window?: StatsWindow },
): { buckets: StatsBucket[]; truncated: boolean } {
  const b = opts.window ? new IntervalBucketer(statsIntervals(opts.window, opts.interval)) : new StatsBucketer(opts.interval, opts.tz);
  for (const row of rows) b.add(row);
  return capBuckets(b.buckets(), opts.maxBuckets);
}

/**
 * Bucketing into the intervals of a widened window (statsIntervals), the ones the rollups answer:
 * where a zone moves its clocks by half an hour, luxon's floor of a sample's local hour and the
 * window's walk from boundary to boundary can disagree, so an answer keeps to the walk.
 */
class IntervalBucketer {
  private readonly accs = new Map<string, Acc>();
  constructor(private readonly intervals: readonly StatsIntervalSpan[]) {}

  add(row: StatsRow): void {
    const ms = Date.parse(row.start_date);
    let lo = 0;
    let hi = this.intervals.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.intervals[mid]!.end <= ms) lo = mid + 1;
      else hi = mid;
    }
    const i = this.intervals[lo];
    if (!i || ms < i.start) return;
    accumulate(this.accs, i.start, () => labelOf(i), row);
  }

  buckets(): StatsBucket[] {
    return sortedBuckets(this.accs.values());
  }
}

function capBuckets(buckets: StatsBucket[], maxBuckets = MAX_STATS_BUCKETS): { buckets: StatsBucket[]; truncated: boolean } {
  return buckets.length > maxBuckets ? { buckets: buckets.slice(0, maxBuckets), truncated: true } : { buckets, truncated: false };
}

export type SampleStatsQuery = {
  userId: string;
  type: string;
  /** Widened window (statsWindow). */
  window: StatsWindow;
  interval: StatsInterval;
  tz: string;
  provider?: string;
  view: View;
};

export type SampleStatsResult = { buckets: StatsBucket[]; truncated: boolean };

/** One interval of a widened window, with the offset of tz at its start (minutes). */
export type StatsIntervalSpan = Interval & { offset: number; zone: Zone };

/**
 * The intervals of a widened window, walking from boundary to boundary. Between two offset changes
 * of the zone the next local midnight (or hour) is plain arithmetic; an interval holding a change
 * is left to luxon (nextBoundary), so both agree on every DST rule while a year costs two luxon
 * steps, not 365.
 */
export function statsIntervals(window: StatsWindow, interval: StatsInterval): StatsIntervalSpan[] {
  const zone = window.start.zone;
  const end = window.end.toMillis();
  const segments = offsetSegments(zone, window.start.toMillis(), end);
  const step = interval === 'day' ? 86_400_000 : 3_600_000;
  const out: StatsIntervalSpan[] = [];
  let seg = 0;
  for (let ms = window.start.toMillis(); ms < end; ) {
    while (seg + 1 < segments.length && segments[seg + 1]!.at <= ms) seg++;
    const offset = segments[seg]!.offset;
    const change = seg + 1 < segments.length ? segments[seg + 1]!.at : Infinity;
    const local = ms + offset * 60_000;
    let next = Math.floor(local / step) * step + step - offset * 60_000;
    if (!Number.isInteger(offset)) next = nextBoundary(DateTime.fromMillis(ms, { zone }), interval).toMillis();
    else if (next >= change) next = acrossChange(local, step, segments, seg + 1, interval) ?? nextBoundary(DateTime.fromMillis(ms, { zone }), interval).toMillis();
    out.push({ start: ms, end: Math.min(next, end), offset, zone });
    ms = next;
  }
  return out;
}

/**
 * The next local midnight after local time `local` when the offset changes (segments[k]) before it
 * comes: the midnight read with the new offset, where that is its only reading (after the change,
 * before the next one, and not read with the old offset before the change: that is what the
 * caller found). A midnight the change skips, or anything but a day, is left to luxon (null).
 */
function acrossChange(local: number, step: number, segments: readonly OffsetSegment[], k: number, interval: StatsInterval): number | null {
  const change = segments[k]!;
  if (interval !== 'day' || !Number.isInteger(change.offset)) return null;
  const next = Math.floor(local / step) * step + step - change.offset * 60_000;
  const after = k + 1 < segments.length ? segments[k + 1]!.at : Infinity;
  return next >= change.at && next < after ? next : null;
}

/**
 * formatWithOffset of an interval's start; without luxon's formatter, and without a Date, where the
 * offset is whole minutes (every one since 1972): an answer writes one per interval.
 */
export const labelOf = (i: StatsIntervalSpan): string => {
  const offset = i.offset;
  if (!Number.isInteger(offset)) return formatWithOffset(DateTime.fromMillis(i.start, { zone: i.zone }));
  const local = i.start + offset * 60_000;
  const day = Math.floor(local / 86_400_000);
  const seconds = Math.floor((local - day * 86_400_000) / 1000);
  const abs = Math.abs(offset);
  return `${dateOfDayNumber(day)}T${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}${offset < 0 ? '-' : '+'}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
};

/**
 * Every sample of the window counts (contracts §6). Where the intervals fall on UTC quarter hours
 * (any zone's since 1972) the answer is summed from the rollups, a few rows per UTC day
 * (rollupStats.ts); otherwise (local mean time before 1972) the samples are read and bucketed,
 * `chunk` rows at a time. Both views read state the samples projection keeps: the merged view
 * counts the samples it lists; neither counts samples their quality flags leave out (§15).
 */
export async function sampleStats(
  readStore: ReadStore,
  q: SampleStatsQuery,
  opts: { maxBuckets?: number; chunk?: number } = {},
): Promise<SampleStatsResult> {
  const intervals = statsIntervals(q.window, q.interval);
  if (quarterAligned(intervals)) {
    const stats = await statsFromRollups(readStore, { userId: q.userId, type: q.type, view: q.view, ...(q.provider !== undefined ? { provider: q.provider } : {}) }, intervals);
    // One label per interval, however many series it holds.
    const labels: string[] = [];
    const buckets = stats.map((s) => {
      const start = (labels[s.interval] ??= labelOf(intervals[s.interval]!));
      return { start, provider: s.provider, source: s.source, unit: s.unit, count: s.count, sum: s.sum, avg: s.sum / s.count, min: s.min, max: s.max };
    });
    return capBuckets(buckets, opts.maxBuckets);
  }
  const chunk = Math.max(1, opts.chunk ?? 10_000);
  const bucketer = new IntervalBucketer(intervals);
  for await (const rows of countedSamples(readStore, q, chunk)) for (const row of rows) bucketer.add(row);
  return capBuckets(bucketer.buckets(), opts.maxBuckets);
}

function countedSamples(readStore: ReadStore, q: SampleStatsQuery, chunk: number): AsyncGenerator<SampleDoc[]> {
  return sampleChunks(
    readStore,
    {
      userId: q.userId,
      type: q.type,
      ...(q.provider !== undefined ? { provider: q.provider } : {}),
      start: q.window.start.toUTC().toISO()!,
      end: q.window.end.toUTC().toISO()!,
      // Samples their quality flags leave out count in neither view (contracts §15), as in the rollups; the merged view counts the ones it lists.
      leaveOut: q.view === 'merged' ? ['excluded', 'hidden'] : ['excluded'],
    },
    chunk,
  );
}
