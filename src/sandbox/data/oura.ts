import { DateTime } from 'luxon';
import type { DataHandler } from '../sandboxTypes.js';
import { between, datesBetween, localDay, localMs, seeded, shiftDate } from './sandboxSeries.js';
import { stableUuid } from './stableUuid.js';

/**
 * Oura API v2 in the sandbox: the `/v2/usercollection/*` collections a pull reads, in Oura's
 * shapes, for one ring wearer in Helsinki (summer and winter time). Daily documents and sleep
 * periods are chosen by `day` between `start_date` and `end_date` (both included); heart rate by
 * instant between `start_datetime` and `end_datetime` (at most 30 days). Pages are short so that
 * `next_token` paging is exercised. Nothing is answered for a day whose data the ring could not
 * have yet; today's activity counts what was done so far.
 */
const ZONE = 'Europe/Helsinki';
const DAY_PAGE = 10;
const HR_PAGE = 500;
const MIN = 60_000;
const EPOCH = 5 * MIN;

type Answer = { status: number; body: unknown };
const bad = (detail: string): Answer => ({ status: 400, body: { detail } });

/** Oura writes local times with the offset and without milliseconds. */
const local = (ms: number) => DateTime.fromMillis(ms, { zone: ZONE }).toISO({ suppressMilliseconds: true })!;
/** Heart-rate timestamps come in UTC. */
const utc = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', '+00:00');

// ---------------------------------------------------------------------------------------------
// The wearer's nights, workouts and days.

type Night = { id: string; day: string; type: 'long_sleep' | 'late_nap'; start: number; end: number; codes: string; hr: (number | null)[]; hrv: (number | null)[]; breath: number };

function hypnogram(r: () => number, epochs: number): string {
  let s = '4'.repeat(2 + Math.floor(r() * 3));
  let cycle = 0;
  while (s.length < epochs - 2) {
    const deep = Math.max(0, Math.round((4 - cycle) * (2 + r() * 3)));
    const rem = Math.round((cycle + 1) * (1.5 + r() * 2));
    s += '2'.repeat(3 + Math.floor(r() * 4)) + '1'.repeat(deep) + '2'.repeat(2 + Math.floor(r() * 3)) + '3'.repeat(rem);
    if (r() < 0.35) s += '4';
    cycle++;
  }
  return (s.slice(0, epochs - 2) + '44').slice(0, epochs);
}

function series(r: () => number, codes: string, base: number, spread: number, deepShift: number): (number | null)[] {
  return [...codes].map((c, i) => (r() < 0.06 ? null : Math.round(base + (c === '1' ? deepShift : c === '4' ? spread : 0) + spread * Math.sin(i / 9) * 0.4 + between(r, -2, 2))));
}

function mainNight(user: string, day: string): Night {
  const r = seeded(user, 'oura-night', day);
  const start = localMs(shiftDate(day, -1), 22 * 60 + 30 + between(r, 0, 75), ZONE) + between(r, 0, 59) * 1000;
  const epochs = 86 + between(r, 0, 22);
  // Bedtime rarely ends on a five-minute mark: the last epoch is cut short.
  const end = start + epochs * EPOCH - between(r, 10, 240) * 1000;
  const codes = hypnogram(r, epochs);
  return { id: stableUuid(user, 'oura-sleep', day), day, type: 'long_sleep', start, end, codes, hr: series(r, codes, 55, 6, -4), hrv: series(r, codes, 48, 10, 14), breath: between(r, 13.2, 15.6, 3) };
}

function nap(user: string, day: string): Night | null {
  const r = seeded(user, 'oura-nap', day);
  if (r() > 0.2) return null;
  const start = localMs(day, 15 * 60 + between(r, 0, 40), ZONE);
  const epochs = 5 + between(r, 0, 4);
  const codes = '4' + '2'.repeat(epochs - 2) + '4';
  return { id: stableUuid(user, 'oura-nap', day), day, type: 'late_nap', start, end: start + epochs * EPOCH, codes, hr: series(r, codes, 60, 4, 0), hrv: series(r, codes, 40, 6, 0), breath: between(r, 13.5, 16, 3) };
}

function nightsOf(user: string, day: string, now: number): Night[] {
  return [mainNight(user, day), nap(user, day)].filter((n): n is Night => n !== null && n.end <= now);
}

const count = (codes: string, c: string) => [...codes].filter((x) => x === c).length * 300;
const mean = (xs: (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? Math.round((v.reduce((a, b) => a + b, 0) / v.length) * 1000) / 1000 : null;
};

function sleepDocument(n: Night) {
  const inBed = Math.round((n.end - n.start) / 1000);
  const deep = count(n.codes, '1');
  const light = count(n.codes, '2');
  const rem = count(n.codes, '3');
  const hrs = n.hr.filter((x): x is number => x !== null);
  return {
    id: n.id,
    average_breath: n.breath,
    average_heart_rate: mean(n.hr),
    average_hrv: mean(n.hrv) === null ? null : Math.round(mean(n.hrv)!),
    awake_time: inBed - deep - light - rem,
    bedtime_end: local(n.end),
    bedtime_start: local(n.start),
    day: n.day,
    deep_sleep_duration: deep,
    efficiency: Math.round(((deep + light + rem) / inBed) * 100),
    heart_rate: { interval: 300, items: n.hr, timestamp: local(n.start) },
    hrv: { interval: 300, items: n.hrv, timestamp: local(n.start) },
    latency: n.codes.indexOf('2') * 300,
    light_sleep_duration: light,
    low_battery_alert: false,
    lowest_heart_rate: hrs.length ? Math.min(...hrs) : null,
    movement_30_sec: [...n.codes].flatMap((c) => (c === '4' ? '3322332233' : '1111111111').split('')).join(''),
    period: n.type === 'long_sleep' ? 0 : 1,
    readiness: null,
    readiness_score_delta: null,
    rem_sleep_duration: rem,
    restless_periods: count(n.codes, '4') / 300,
    sleep_phase_5_min: n.codes,
    sleep_score_delta: null,
    sleep_algorithm_version: 'v2',
    time_in_bed: inBed,
    total_sleep_duration: deep + light + rem,
    type: n.type,
  };
}

type Workout = { id: string; day: string; activity: string; start: number; end: number; calories: number; distance: number | null; intensity: string; source: string };

const ACTIVITIES = [
  { activity: 'walking', met: 3.5, speed: 1.4, intensity: 'easy' },
  { activity: 'running', met: 9.5, speed: 2.9, intensity: 'hard' },
  { activity: 'cycling', met: 7, speed: 6.5, intensity: 'moderate' },
  { activity: 'strengthTraining', met: 5, speed: 0, intensity: 'moderate' },
  { activity: 'yoga', met: 2.5, speed: 0, intensity: 'easy' },
];

function workoutOf(user: string, day: string, now: number): Workout | null {
  const r = seeded(user, 'oura-workout', day);
  if (r() > 0.6) return null;
  const a = ACTIVITIES[Math.floor(r() * ACTIVITIES.length)]!;
  const start = localMs(day, 17 * 60 + between(r, 0, 90), ZONE);
  const minutes = 25 + between(r, 0, 50);
  const end = start + minutes * MIN;
  if (end > now) return null;
  return {
    id: stableUuid(user, 'oura-workout', day),
    day,
    activity: a.activity,
    start,
    end,
    calories: Math.round(a.met * 68 * (minutes / 60)),
    distance: a.speed ? Math.round(a.speed * minutes * 60) : null,
    intensity: a.intensity,
    source: a.activity === 'yoga' ? 'manual' : r() < 0.5 ? 'autodetected' : 'confirmed',
  };
}

function workoutDocument(w: Workout) {
  return { id: w.id, activity: w.activity, calories: w.calories, day: w.day, distance: w.distance, end_datetime: local(w.end), intensity: w.intensity, label: null, source: w.source, start_datetime: local(w.start) };
}

function activityDocument(user: string, day: string, now: number) {
  const r = seeded(user, 'oura-activity', day);
  const start = localMs(day, 4 * 60, ZONE);
  // The day still running counts what was done so far.
  const done = Math.min(1, Math.max(0, (now - start) / (24 * 60 * MIN)));
  const steps = Math.round((5500 + between(r, 0, 8000)) * done);
  const workout = workoutOf(user, day, now);
  const active = Math.round(steps * 0.04 + (workout?.calories ?? 0) * done);
  const classes = Array.from({ length: 288 }, (_, i) => (i < 24 || i > 264 ? '1' : r() < 0.1 ? '0' : String(2 + Math.floor(r() * 3)))).join('');
  return {
    id: stableUuid(user, 'oura-activity', day),
    class_5_min: classes,
    score: between(r, 62, 96),
    active_calories: active,
    average_met_minutes: between(r, 1.2, 1.9, 2),
    contributors: { meet_daily_targets: between(r, 40, 100), move_every_hour: between(r, 60, 100), recovery_time: between(r, 70, 100), stay_active: between(r, 50, 100), training_frequency: between(r, 60, 100), training_volume: between(r, 60, 100) },
    equivalent_walking_distance: Math.round(steps * 0.78),
    high_activity_met_minutes: between(r, 0, 60),
    high_activity_time: between(r, 0, 30) * 60,
    inactivity_alerts: between(r, 0, 3),
    low_activity_met_minutes: between(r, 100, 250),
    low_activity_time: between(r, 120, 300) * 60,
    medium_activity_met_minutes: between(r, 20, 120),
    medium_activity_time: between(r, 10, 60) * 60,
    met: { interval: 60, items: Array.from({ length: 60 }, () => between(r, 0.9, 3.5, 1)), timestamp: local(start) },
    meters_to_target: between(r, 0, 4000),
    non_wear_time: between(r, 0, 40) * 60,
    resting_time: between(r, 25000, 32000),
    sedentary_met_minutes: between(r, 5, 15),
    sedentary_time: between(r, 20000, 30000),
    steps,
    target_calories: 450,
    target_meters: 9000,
    total_calories: active + 1650 + between(r, 0, 120),
    day,
    timestamp: local(start),
  };
}

function dailySleepDocument(user: string, n: Night) {
  const r = seeded(user, 'oura-daily-sleep', n.day);
  const c = () => between(r, 55, 99);
  return { id: stableUuid(user, 'oura-daily-sleep', n.day), contributors: { deep_sleep: c(), efficiency: c(), latency: c(), rem_sleep: c(), restfulness: c(), timing: c(), total_sleep: c() }, day: n.day, score: between(r, 58, 94), timestamp: local(localMs(n.day, 0, ZONE)) };
}

function readinessDocument(user: string, day: string) {
  const r = seeded(user, 'oura-readiness', day);
  const c = () => between(r, 50, 100);
  return {
    id: stableUuid(user, 'oura-readiness', day),
    contributors: { activity_balance: c(), body_temperature: c(), hrv_balance: c(), previous_day_activity: c(), previous_night: c(), recovery_index: c(), resting_heart_rate: c(), sleep_balance: c() },
    day,
    score: between(r, 55, 95),
    temperature_deviation: between(r, -0.45, 0.45, 2),
    temperature_trend_deviation: between(r, -0.3, 0.3, 2),
    timestamp: local(localMs(day, 0, ZONE)),
  };
}

function spo2Document(user: string, day: string) {
  const r = seeded(user, 'oura-spo2', day);
  // Now and then the ring had too little signal for a figure.
  const average = r() < 0.12 ? null : between(r, 94.8, 98.6, 3);
  return { id: stableUuid(user, 'oura-spo2', day), day, spo2_percentage: average === null ? null : { average }, breathing_disturbance_index: between(r, 2, 14) };
}

// ---------------------------------------------------------------------------------------------
// Collections and paging.

type Page = { status: number; body: unknown };

function page(docs: unknown[], query: URLSearchParams, size: number): Page {
  let offset = 0;
  const token = query.get('next_token');
  if (token) {
    const o = Number(Buffer.from(token, 'base64url').toString('utf8').replace(/^o:/, ''));
    if (!Number.isInteger(o) || o < 0 || o > docs.length) return bad('next_token is not valid');
    offset = o;
  }
  const next = offset + size < docs.length ? Buffer.from(`o:${offset + size}`).toString('base64url') : null;
  return { status: 200, body: { data: docs.slice(offset, offset + size), next_token: next } };
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The days asked for, both ends included, never beyond today at the wearer's place. */
function daysOf(query: URLSearchParams, now: number): string[] | Answer {
  const today = localDay(now, ZONE);
  const end = query.get('end_date') ?? today;
  const start = query.get('start_date') ?? shiftDate(end, -1);
  if (!DATE.test(start) || !DATE.test(end) || Number.isNaN(Date.parse(start)) || Number.isNaN(Date.parse(end))) return bad('start_date and end_date are dates YYYY-MM-DD');
  if (start > end) return bad('start_date is after end_date');
  return datesBetween(start, end < today ? end : today);
}

function heartrate(user: string, query: URLSearchParams, now: number): Answer {
  const a = Date.parse(query.get('start_datetime') ?? '');
  const b = query.get('end_datetime') ? Date.parse(query.get('end_datetime')!) : now;
  if (Number.isNaN(a) || Number.isNaN(b)) return bad('start_datetime and end_datetime are date-times');
  if (b < a) return bad('start_datetime is after end_datetime');
  if (b - a > 30 * 24 * 60 * MIN) return bad('the range between start_datetime and end_datetime is at most 30 days');
  const last = Math.min(b, now);
  const docs: unknown[] = [];
  if (last < a) return page(docs, query, HR_PAGE);
  // Each UTC day's readings come from one sequence of that day, whatever the window asks of it.
  const days = datesBetween(new Date(a).toISOString().slice(0, 10), new Date(last).toISOString().slice(0, 10));
  const around = datesBetween(shiftDate(days[0]!, -1), shiftDate(days.at(-1)!, 2));
  const asleep = around.flatMap((d) => nightsOf(user, d, Infinity));
  const training = around.map((d) => workoutOf(user, d, Infinity)).filter((w): w is Workout => w !== null);
  for (const day of days) {
    const r = seeded(user, 'oura-hr', day);
    const dayStart = Date.parse(`${day}T00:00:00Z`);
    for (let i = 0; i < 288; i++) {
      const t = dayStart + i * EPOCH + 46_000;
      const awakeDraw = r();
      const value = r();
      if (t < a || t > last) continue;
      const night = asleep.find((n) => t >= n.start && t < n.end);
      if (training.some((w) => t >= w.start && t < w.end)) docs.push({ bpm: Math.round(115 + value * 47), source: 'workout', timestamp: utc(t) });
      else if (night) docs.push({ bpm: night.hr[Math.floor((t - night.start) / EPOCH)] ?? Math.round(50 + value * 8), source: 'sleep', timestamp: utc(t) });
      // Awake, the ring measures now and then.
      else if (awakeDraw < 0.4) docs.push({ bpm: Math.round(62 + value * 26), source: 'awake', timestamp: utc(t) });
    }
  }
  return page(docs, query, HR_PAGE);
}

const COLLECTIONS: Readonly<Record<string, (user: string, days: string[], now: number) => unknown[]>> = {
  daily_activity: (user, days, now) => days.map((d) => activityDocument(user, d, now)).filter((d) => d.steps > 0 || d.day !== localDay(now, ZONE)),
  daily_sleep: (user, days, now) => days.flatMap((d) => nightsOf(user, d, now).filter((n) => n.type === 'long_sleep').map((n) => dailySleepDocument(user, n))),
  daily_readiness: (user, days, now) => days.filter((d) => nightsOf(user, d, now).length > 0).map((d) => readinessDocument(user, d)),
  daily_spo2: (user, days, now) => days.filter((d) => nightsOf(user, d, now).length > 0).map((d) => spo2Document(user, d)),
  sleep: (user, days, now) => days.flatMap((d) => nightsOf(user, d, now).map(sleepDocument)),
  workout: (user, days, now) => days.map((d) => workoutOf(user, d, now)).filter((w): w is Workout => w !== null).map(workoutDocument),
};

const PREFIX = '/v2/usercollection/';

export const ouraData: DataHandler = ({ method, path, query, token, now }) => {
  if (method !== 'GET' || !path.startsWith(PREFIX)) return null;
  const name = path.slice(PREFIX.length);
  const user = token.user;
  if (name === 'personal_info') {
    return { status: 200, body: { id: stableUuid(user, 'oura-person'), age: 34, weight: 68.4, height: 1.71, biological_sex: 'female', email: 'sandbox.wearer@example.com' } };
  }
  if (name === 'heartrate') return heartrate(user, query, now.getTime());
  const collection = COLLECTIONS[name];
  if (!collection) return null;
  const days = daysOf(query, now.getTime());
  if (!Array.isArray(days)) return days;
  return page(collection(user, days, now.getTime()), query, DAY_PAGE);
};
