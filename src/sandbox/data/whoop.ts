import { DateTime } from 'luxon';
import type { DataHandler } from '../sandboxTypes.js';
import { between, datesBetween, localDay, localMs, seeded, shiftDate, stableId } from './sandboxSeries.js';
import { stableUuid } from './stableUuid.js';

/**
 * The WHOOP developer API v2 in the sandbox: cycles, recoveries, sleeps and workouts of one member
 * in New York (summer and winter time), answered newest first in pages of `limit` (at most 25,
 * default 10) with `next_token`, sent back as `nextToken`. A document is answered when its span
 * meets [start, end); times are UTC with the member's `timezone_offset` beside them. The current
 * cycle has no end; a sleep or workout that ended less than 30 minutes ago is PENDING_SCORE.
 */
const ZONE = 'America/New_York';
const MIN = 60_000;
const PENDING_MS = 30 * MIN;
const USER_ID = (user: string) => stableId(user, 'whoop-member') % 10_000_000;

type Answer = { status: number; body: unknown };
const bad = (message: string): Answer => ({ status: 400, body: { message } });

const utc = (ms: number) => new Date(ms).toISOString();
const offsetOf = (ms: number) => DateTime.fromMillis(ms, { zone: ZONE }).toFormat('ZZ');

type Sleep = { id: string; day: string; start: number; end: number; nap: boolean; r: () => number };

/** The night ending on `day`: from about 23:00 the evening before to about 06:45. */
function nightOf(user: string, day: string): Sleep {
  const r = seeded(user, 'whoop-night', day);
  const start = localMs(shiftDate(day, -1), 22 * 60 + 40 + between(r, 0, 80), ZONE) + between(r, 0, 59_999);
  const end = localMs(day, 6 * 60 + 15 + between(r, 0, 70), ZONE) + between(r, 0, 59_999);
  return { id: stableUuid(user, 'whoop-sleep', day), day, start, end, nap: false, r };
}

function napOf(user: string, day: string): Sleep | null {
  const r = seeded(user, 'whoop-nap', day);
  if (r() > 0.15) return null;
  const start = localMs(day, 14 * 60 + between(r, 0, 60), ZONE);
  return { id: stableUuid(user, 'whoop-nap', day), day, start, end: start + (20 + between(r, 0, 25)) * MIN, nap: true, r };
}

const created = (ms: number) => ms + 4 * MIN + 17_000;
const scored = (end: number, now: number) => (now - end >= PENDING_MS ? 'SCORED' : 'PENDING_SCORE');

/** The cycle of `day` runs from its night's start to the next night's start (open while that is ahead). */
function cycleDocument(user: string, day: string, now: number) {
  const night = nightOf(user, day);
  const next = nightOf(user, shiftDate(day, 1));
  const open = next.start > now;
  const end = open ? null : next.start;
  const r = seeded(user, 'whoop-cycle', day);
  const hours = ((end ?? now) - night.start) / (60 * MIN);
  const strain = Math.min(21, Math.round((between(r, 6, 17, 4) * Math.min(1, hours / 24)) * 10000) / 10000);
  return {
    id: stableId(user, 'whoop-cycle', day) % 1_000_000_000,
    user_id: USER_ID(user),
    created_at: utc(created(night.start)),
    updated_at: utc(open ? now : created(next.start)),
    start: utc(night.start),
    end: end === null ? null : utc(end),
    timezone_offset: offsetOf(night.start),
    score_state: 'SCORED',
    score: { strain, kilojoule: Math.round(hours * (360 + between(r, 0, 120)) * 10) / 10, average_heart_rate: between(r, 62, 76), max_heart_rate: between(r, 150, 185) },
  };
}

function recoveryDocument(user: string, day: string, now: number) {
  const night = nightOf(user, day);
  const r = seeded(user, 'whoop-recovery', day);
  const state = scored(night.end, now);
  return {
    cycle_id: stableId(user, 'whoop-cycle', day) % 1_000_000_000,
    sleep_id: night.id,
    user_id: USER_ID(user),
    created_at: utc(created(night.end)),
    updated_at: utc(created(night.end) + 20_000),
    score_state: state,
    ...(state === 'SCORED'
      ? { score: { user_calibrating: false, recovery_score: between(r, 25, 98), resting_heart_rate: between(r, 46, 58), hrv_rmssd_milli: between(r, 38, 95, 6), spo2_percentage: between(r, 94.5, 98.5, 4), skin_temp_celsius: between(r, 33.2, 34.6, 5) } }
      : {}),
  };
}

function sleepDocument(user: string, s: Sleep, now: number) {
  const r = s.r;
  const inBed = s.end - s.start;
  const awake = Math.round(inBed * between(r, 0.05, 0.12, 3));
  const asleep = inBed - awake;
  const deep = Math.round(asleep * between(r, 0.16, 0.24, 3));
  const rem = s.nap ? 0 : Math.round(asleep * between(r, 0.18, 0.26, 3));
  const state = scored(s.end, now);
  return {
    id: s.id,
    cycle_id: stableId(user, 'whoop-cycle', s.day) % 1_000_000_000,
    v1_id: stableId(user, 'whoop-sleep-v1', s.id) % 100_000_000,
    user_id: USER_ID(user),
    created_at: utc(created(s.end)),
    updated_at: utc(created(s.end) + 20_000),
    start: utc(s.start),
    end: utc(s.end),
    timezone_offset: offsetOf(s.start),
    nap: s.nap,
    score_state: state,
    ...(state === 'SCORED'
      ? {
          score: {
            stage_summary: {
              total_in_bed_time_milli: inBed,
              total_awake_time_milli: awake,
              total_no_data_time_milli: 0,
              total_light_sleep_time_milli: asleep - deep - rem,
              total_slow_wave_sleep_time_milli: deep,
              total_rem_sleep_time_milli: rem,
              sleep_cycle_count: s.nap ? 1 : between(r, 3, 6),
              disturbance_count: between(r, 2, 14),
            },
            sleep_needed: { baseline_milli: 27_900_000, need_from_sleep_debt_milli: between(r, 0, 2_400_000), need_from_recent_strain_milli: between(r, 0, 900_000), need_from_recent_nap_milli: 0 },
            respiratory_rate: between(r, 14.2, 16.8, 7),
            sleep_performance_percentage: between(r, 62, 100),
            sleep_consistency_percentage: between(r, 55, 92),
            sleep_efficiency_percentage: Math.round((asleep / inBed) * 10000) / 100,
          },
        }
      : {}),
  };
}

const SPORTS = [
  { id: 0, name: 'running', kjPerMin: 55, speed: 2.9 },
  { id: 1, name: 'cycling', kjPerMin: 45, speed: 7 },
  { id: 45, name: 'weightlifting', kjPerMin: 25, speed: 0 },
  { id: 44, name: 'yoga', kjPerMin: 12, speed: 0 },
  { id: 63, name: 'walking', kjPerMin: 18, speed: 1.4 },
  { id: 96, name: 'hiit', kjPerMin: 50, speed: 0 },
];

function workoutDocument(user: string, day: string, now: number) {
  const r = seeded(user, 'whoop-workout', day);
  if (r() > 0.65) return null;
  const sport = SPORTS[Math.floor(r() * SPORTS.length)]!;
  const start = localMs(day, 6 * 60 + 50 + (r() < 0.5 ? 0 : 11 * 60) + between(r, 0, 40), ZONE) + between(r, 0, 59_999);
  const minutes = 22 + between(r, 0, 55);
  const end = start + minutes * MIN;
  if (start > now) return null;
  const state = end > now ? null : scored(end, now);
  if (state === null) return null; // still going: WHOOP lists it once it has ended
  const ms = minutes * MIN;
  const z = [0.05, 0.15, 0.3, 0.3, 0.15].map((f) => Math.round(ms * f));
  return {
    id: stableUuid(user, 'whoop-workout', day),
    v1_id: stableId(user, 'whoop-workout-v1', day) % 100_000_000,
    user_id: USER_ID(user),
    created_at: utc(created(end)),
    updated_at: utc(created(end) + 20_000),
    start: utc(start),
    end: utc(end),
    timezone_offset: offsetOf(start),
    sport_name: sport.name,
    sport_id: sport.id,
    score_state: state,
    ...(state === 'SCORED'
      ? {
          score: {
            strain: between(r, 6, 16, 4),
            average_heart_rate: between(r, 118, 150),
            max_heart_rate: between(r, 160, 188),
            kilojoule: Math.round(sport.kjPerMin * minutes * between(r, 0.85, 1.15, 2) * 10) / 10,
            percent_recorded: 100,
            ...(sport.speed ? { distance_meter: Math.round(sport.speed * minutes * 60 * 10) / 10, altitude_gain_meter: between(r, 5, 120, 1), altitude_change_meter: between(r, -8, 8, 1) } : {}),
            zone_durations: { zone_zero_milli: ms - z.reduce((a, b) => a + b, 0), zone_one_milli: z[0], zone_two_milli: z[1], zone_three_milli: z[2], zone_four_milli: z[3], zone_five_milli: z[4] },
          },
        }
      : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Collections: the window, newest first, paging.

type Doc = { at: number; until: number; doc: unknown };

function windowOf(query: URLSearchParams, now: number): { a: number; b: number } | Answer {
  const b = query.get('end') ? Date.parse(query.get('end')!) : now;
  // Without a start this sandbox answers the last 30 days, enough for any backfill it plays.
  const a = query.get('start') ? Date.parse(query.get('start')!) : b - 30 * 24 * 60 * MIN;
  if (Number.isNaN(a) || Number.isNaN(b)) return bad('start and end are ISO 8601 date-times');
  if (b < a) return bad('start is after end');
  if (b - a > 400 * 24 * 60 * MIN) return bad('the window is limited to 400 days in this sandbox');
  return { a, b: Math.min(b, now) };
}

function answer(docs: Doc[], w: { a: number; b: number }, query: URLSearchParams): Answer {
  const limit = query.get('limit') === null ? 10 : Number(query.get('limit'));
  if (!Number.isInteger(limit) || limit < 1 || limit > 25) return bad('limit must be between 1 and 25');
  const hits = docs.filter((d) => d.at < w.b && d.until >= w.a).sort((x, y) => y.at - x.at);
  let offset = 0;
  const token = query.get('nextToken');
  if (token) {
    const o = Number(Buffer.from(token, 'base64url').toString('utf8').replace(/^p:/, ''));
    if (!Number.isInteger(o) || o < 0 || o > hits.length) return bad('nextToken is not valid');
    offset = o;
  }
  const records = hits.slice(offset, offset + limit).map((d) => d.doc);
  return { status: 200, body: offset + limit < hits.length ? { records, next_token: Buffer.from(`p:${offset + limit}`).toString('base64url') } : { records } };
}

/** Days whose documents can meet [a, b]: a night starts the evening before its day. */
const daysAround = (w: { a: number; b: number }) => datesBetween(localDay(w.a, ZONE), shiftDate(localDay(w.b, ZONE), 1));

const PATHS: Readonly<Record<string, (user: string, day: string, now: number) => Doc[]>> = {
  '/developer/v2/cycle': (user, day, now) => {
    const n = nightOf(user, day);
    if (n.start > now) return [];
    const doc = cycleDocument(user, day, now);
    return [{ at: n.start, until: doc.end ? Date.parse(doc.end) : now, doc }];
  },
  '/developer/v2/recovery': (user, day, now) => {
    const n = nightOf(user, day);
    if (n.end > now) return [];
    const next = nightOf(user, shiftDate(day, 1));
    return [{ at: n.start, until: next.start > now ? now : next.start, doc: recoveryDocument(user, day, now) }];
  },
  '/developer/v2/activity/sleep': (user, day, now) =>
    [nightOf(user, day), napOf(user, day)].filter((s): s is Sleep => s !== null && s.end <= now).map((s) => ({ at: s.start, until: s.end, doc: sleepDocument(user, s, now) })),
  '/developer/v2/activity/workout': (user, day, now) => {
    const doc = workoutDocument(user, day, now);
    return doc ? [{ at: Date.parse(doc.start), until: Date.parse(doc.end), doc }] : [];
  },
};

export const whoopData: DataHandler = ({ method, path, query, token, now }) => {
  if (method !== 'GET') return null;
  const user = token.user;
  if (path === '/developer/v2/user/measurement/body') return { status: 200, body: { height_meter: 1.8288, weight_kilogram: 81.6466, max_heart_rate: 194 } };
  if (path === '/developer/v2/user/profile/basic') return { status: 200, body: { user_id: USER_ID(user), email: 'sandbox.member@example.com', first_name: 'Sandbox', last_name: 'Member' } };
  const docsOf = PATHS[path];
  if (!docsOf) return null;
  const w = windowOf(query, now.getTime());
  if (!('a' in w)) return w;
  const docs = daysAround(w).flatMap((day) => docsOf(user, day, now.getTime()));
  return answer(docs, w, query);
};
