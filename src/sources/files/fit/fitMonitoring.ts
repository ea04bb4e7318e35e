import { fitTimestampToUnixMilliseconds } from 'fit-file-parser';
import type { Metadata } from '../../../../commands/ingestion/records.js';
import { FIT_ACTIVITY_TYPES } from './fitMessages.js';

/**
 * A monitoring file's readings → per-interval amounts (contracts §20: `step_count`, `heart_rate`
 * and `active_energy_burned` per interval; docs/formats/fit.md, "Monitoring files"). The decoder
 * hands on the fields as the file holds them; what is applied here is the FIT profile's meaning
 * of three of them, none of it byte decoding:
 * - `timestamp_16` is the low 16 bits of the time (seconds since the FIT epoch), to be read
 *   against the last full time before it in the file;
 * - `current_activity_type_intensity` packs the activity type (low 5 bits) and intensity (high 3);
 * - `cycles` and `active_calories` of interval messages are cumulative per activity type since the
 *   start of the local day, so an interval's amount is the difference from the reading before.
 */

const FIT_EPOCH_MS = fitTimestampToUnixMilliseconds(0);
const DAY_MS = 86_400_000;

const ACTIVITY_TYPE_NAMES = new Set(FIT_ACTIVITY_TYPES.values());
/** Activity types whose `cycles` are steps (the profile's `steps` subfield: cycles × 2). */
const STEPPING = new Set(['walking', 'running']);

export type MonitoringReading = {
  type: 'heart_rate' | 'step_count' | 'active_energy_burned';
  value: number;
  start: Date;
  end: Date;
  metadata: Metadata;
};

/** A counter's last cumulative reading: its value and time (ms). */
type Counter = { value: number; at: number };
type Counters = { steps?: Counter; kcal?: Counter };

/** What could not be read, by why (one rejection per file names the counts). */
type Unread = { untimed: number; untyped: number; unanchored: number; unordered: number; totalBelow: number };

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const timeOf = (v: unknown): number | null => (v instanceof Date && Number.isFinite(v.getTime()) ? v.getTime() : null);

/**
 * The monitoring state of one FIT file (a chained file starts a new one). It holds one counter
 * pair per activity type, and activity types are an 8-bit enum (5 bits when packed): at most 256
 * entries whatever the file holds (§18).
 */
export class MonitoringReadings {
  /** The last full time seen in the file (ms), which a `timestamp_16` completes. */
  private lastTime: number | null = null;
  /** Local minus UTC (ms), from `monitoring_info`: where the file's local days start. */
  private offsetMs: number | null = null;
  private readonly counters = new Map<string, Counters>();
  private readonly unread: Unread = { untimed: 0, untyped: 0, unanchored: 0, unordered: 0, totalBelow: 0 };

  /** A message's full `timestamp` (any message's, `monitoring_info`'s too): the reference of the 16-bit times after it. */
  noteTime(timestamp: unknown): void {
    const t = timeOf(timestamp);
    if (t !== null) this.lastTime = t;
  }

  /** The file's local offset (minutes, from `monitoring_info`), which places its days. */
  noteLocalOffset(minutes: number): void {
    this.offsetMs = minutes * 60_000;
  }

  /** The amounts one `monitoring` message gives (none for a reading of activity type and intensity alone). */
  read(f: Record<string, unknown>): MonitoringReading[] {
    const t = this.timeOfMessage(f);
    const hr = num(f.heart_rate);
    const cycles = num(f.cycles);
    const kcal = num(f.active_calories);
    if (hr === null && cycles === null && kcal === null) return [];
    if (t === null) {
      this.unread.untimed++;
      return [];
    }
    const out: MonitoringReading[] = [];
    if (hr !== null) out.push({ type: 'heart_rate', value: hr, start: new Date(t), end: new Date(t), metadata: {} });
    if (cycles === null && kcal === null) return out;

    const packed = num(f.current_activity_type_intensity);
    const activityType = activityTypeOf(f.activity_type) ?? (packed === null ? null : activityTypeOf(packed & 0x1f));
    if (activityType === null) {
      this.unread.untyped++;
      return out;
    }
    const metadata: Metadata = { fit_activity_type: activityType };
    if (packed !== null && f.activity_type === undefined) metadata.fit_intensity = packed >> 5;
    // A message with `duration_min` is the total of that many minutes ending at its time (a day's
    // summary); it is the counter's last reading of that window.
    const minutes = num(f.duration_min);
    const total = minutes !== null && minutes > 0;
    const windowStart = total ? t - minutes * 60_000 : this.dayStart(t);
    const counters = this.counters.get(activityType) ?? {};
    this.counters.set(activityType, counters);
    let why: keyof Unread | null = null;
    const amount = (key: keyof Counters, value: number, type: MonitoringReading['type']) => {
      const a = this.advance(counters, key, value, t, windowStart, total);
      if (typeof a === 'string') why ??= a;
      else if (a.value > 0) out.push({ type, value: a.value, start: new Date(a.start), end: new Date(t), metadata });
    };
    // The profile's `cycles` has scale 2; for walking and running its `steps` subfield is the raw value.
    if (cycles !== null && STEPPING.has(activityType)) amount('steps', Math.round(cycles * 2), 'step_count');
    if (kcal !== null) amount('kcal', kcal, 'active_energy_burned');
    if (why) this.unread[why]++;
    return out;
  }

  /** Why readings of this file were not read (one sentence), or null when all were. */
  unreadReason(): string | null {
    const u = this.unread;
    const parts = [
      [u.untimed, 'whose time is neither a full timestamp nor a 16-bit one after a full time in the file'],
      [u.untyped, 'holding cumulative values without an activity type'],
      [u.unanchored, 'holding the first cumulative value of an activity type in a file without monitoring_info, so its interval has no start'],
      [u.unordered, 'earlier than the reading of their activity type before them'],
      [u.totalBelow, 'holding a day total below the last reading of that day (the intervals were kept)'],
    ] as const;
    const named = parts.filter(([n]) => n > 0);
    if (named.length === 0) return null;
    const n = named.reduce((sum, [k]) => sum + k, 0);
    return `${n} monitoring ${n === 1 ? 'message was' : 'messages were'} not read: ${named.map(([k, why]) => `${k} ${why}`).join('; ')}`;
  }

  /**
   * The message's time: a `timestamp_16` completed from the last full time before it (the
   * profile's rule: the time whose low 16 bits they are, at or after that time), else its own
   * `timestamp`. Each time read becomes the reference of the next, so a file whose full times
   * are more than 18 hours apart still reads right while its readings are not.
   */
  private timeOfMessage(f: Record<string, unknown>): number | null {
    const ts16 = num(f.timestamp16);
    let t: number | null;
    if (ts16 !== null) {
      if (this.lastTime === null) return null;
      const ref = Math.floor((this.lastTime - FIT_EPOCH_MS) / 1000);
      t = FIT_EPOCH_MS + (ref + ((ts16 - (ref & 0xffff)) & 0xffff)) * 1000;
    } else t = timeOf(f.timestamp);
    if (t !== null) this.lastTime = t;
    return t;
  }

  /** The start (ms, UTC) of the local day holding `t`, when the file says its offset. */
  private dayStart(t: number): number | null {
    if (this.offsetMs === null) return null;
    return Math.floor((t + this.offsetMs) / DAY_MS) * DAY_MS - this.offsetMs;
  }

  /**
   * One cumulative reading → the amount since the reading before it and where that interval
   * starts. A reading of the same local day (window) that is lower means the device's counters
   * were reset in between: the reading is its own amount. The first reading of a day counts from
   * the day's start. A reading at the instant a day starts closes the day before.
   */
  private advance(counters: Counters, key: keyof Counters, value: number, t: number, windowStart: number | null, total: boolean): { value: number; start: number } | 'unordered' | 'unanchored' | 'totalBelow' {
    const prev = counters[key];
    if (prev && t < prev.at) return 'unordered';
    if (prev && (windowStart === null || prev.at > windowStart)) {
      if (value < prev.value && total) return 'totalBelow';
      counters[key] = { value, at: t };
      return { value: value >= prev.value ? value - prev.value : value, start: prev.at };
    }
    counters[key] = { value, at: t };
    // Without the file's day (no monitoring_info) the first reading only anchors the next.
    return windowStart === null ? 'unanchored' : { value, start: windowStart };
  }
}

/** The profile's name of an activity type: the decoder's name as is, a number through the profile's enum (an unknown one as its number). */
function activityTypeOf(v: unknown): string | null {
  if (typeof v === 'string') return ACTIVITY_TYPE_NAMES.has(v) ? v : null;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xff) return FIT_ACTIVITY_TYPES.get(v) ?? String(v);
  return null;
}
