import { DateTime } from 'luxon';
import type { DataHandler, IssuedToken } from '../sandboxTypes.js';
import { between, datesBetween, localDay, localMs, offsetMinutes, seeded, shiftDate, stableId } from './sandboxSeries.js';

/**
 * Fitbit Web API in the sandbox: one person in Paris wearing a Charge 6, with a run most days and
 * an Aria scale every third morning. Every answer is generated from (sandbox user, local date),
 * in Fitbit's documented shapes: local times without an offset (the profile names the zone),
 * intraday series per minute, sleep stages with short wakes, range endpoints with Fitbit's
 * longest ranges, the activity log list paged by offset with `pagination.next`, and the hourly
 * rate limit (150 calls, `Fitbit-Rate-Limit-*` headers, 429 with Retry-After once spent).
 */
const ZONE = 'Europe/Paris';
const HOURLY_CALLS = 150;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

type Minute = { hr: number | null; steps: number };
type Run = { logId: number; start: number; minutes: number; name: 'Run' | 'Walk' };
type Night = { logId: number; start: number; end: number; levels: { at: number; level: string; seconds: number }[]; short: { at: number; seconds: number }[]; classic: boolean };

const localText = (ms: number) => DateTime.fromMillis(ms, { zone: ZONE }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS");
const withOffset = (ms: number) => DateTime.fromMillis(ms, { zone: ZONE }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSSZZ");

/** The night that ends on the morning of `date` (bedtime the evening before). */
function night(user: string, date: string): Night {
  const r = seeded(user, date, 'fitbit-night');
  const start = localMs(shiftDate(date, -1), Math.round(between(r, 22 * 60 + 20, 23 * 60 + 50)), ZONE);
  const end = localMs(date, Math.round(between(r, 6 * 60 + 15, 7 * 60 + 40)), ZONE);
  const classic = r() < 0.1;
  const levels: Night['levels'] = [];
  let t = start;
  const cycle = classic ? ['asleep', 'restless', 'asleep', 'awake'] : ['wake', 'light', 'deep', 'light', 'rem'];
  let i = 0;
  while (t < end) {
    const level = cycle[i % cycle.length]!;
    const minutes = level === 'wake' || level === 'awake' || level === 'restless' ? between(r, 3, 12) : level === 'deep' ? between(r, 15, 45) : between(r, 10, 40);
    const seconds = Math.min(minutes * 60, (end - t) / 1000);
    levels.push({ at: t, level, seconds });
    t += seconds * 1000;
    i++;
  }
  const short: Night['short'] = [];
  if (!classic) {
    for (const l of levels) if (l.level === 'light' && l.seconds >= 900 && r() < 0.5) short.push({ at: l.at + Math.round(l.seconds / 2) * 1000, seconds: 30 * Math.round(between(r, 1, 5)) });
  }
  return { logId: stableId(user, 'fitbit-sleep', date), start, end, levels, short, classic };
}

function runOf(user: string, date: string): Run | null {
  const r = seeded(user, date, 'fitbit-run');
  const kind = r();
  if (kind > 0.65) return null;
  return { logId: stableId(user, 'fitbit-activity', date), start: localMs(date, Math.round(between(r, 17 * 60 + 30, 19 * 60)), ZONE), minutes: Math.round(between(r, 25, 55)), name: kind < 0.5 ? 'Run' : 'Walk' };
}

/** The person's minutes on `date`: asleep before waking and after bedtime, a run or walk in the evening. */
function minutes(user: string, date: string): Minute[] {
  const r = seeded(user, date, 'fitbit-minutes');
  const morning = night(user, date);
  const evening = night(user, shiftDate(date, 1));
  const run = runOf(user, date);
  const midnight = localMs(date, 0, ZONE);
  const count = Math.round((localMs(shiftDate(date, 1), 0, ZONE) - midnight) / 60_000);
  const out: Minute[] = [];
  for (let m = 0; m < count; m++) {
    const t = midnight + m * 60_000;
    const asleep = t < morning.end || t >= evening.start;
    const running = run && t >= run.start && t < run.start + run.minutes * 60_000;
    if (running) out.push({ hr: Math.round(between(r, run.name === 'Run' ? 138 : 98, run.name === 'Run' ? 166 : 118)), steps: Math.round(between(r, run.name === 'Run' ? 155 : 100, run.name === 'Run' ? 178 : 120)) });
    else if (asleep) out.push({ hr: Math.round(between(r, 49, 60)), steps: 0 });
    else {
      const walking = r() < 0.12;
      // The band now and then misses a minute (loose strap): no heart rate for it.
      out.push({ hr: r() < 0.02 ? null : Math.round(between(r, walking ? 88 : 64, walking ? 108 : 86)), steps: walking ? Math.round(between(r, 60, 115)) : r() < 0.2 ? Math.round(between(r, 1, 20)) : 0 });
    }
  }
  return out;
}

const restingOf = (user: string, date: string) => Math.round(between(seeded(user, date, 'fitbit-rhr'), 52, 60));

function weightOf(user: string, date: string) {
  const day = Math.floor(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
  if (day % 3 !== 0) return null;
  const r = seeded(user, date, 'fitbit-weight');
  const weight = Math.round((72 + Math.sin(day / 20) * 1.2 + between(r, -0.4, 0.4, 2)) * 10) / 10;
  return { logId: stableId(user, 'fitbit-weight', date), date, time: `07:${String(30 + Math.round(between(r, 0, 25))).padStart(2, '0')}:12`, weight, bmi: Math.round((weight / 1.78 ** 2) * 100) / 100, fat: between(r, 18, 22, 1), source: 'Aria' };
}

/** Local dates whose data exists by `now` (the current day counts, its later minutes not yet). */
const settled = (date: string, now: Date) => localMs(date, 0, ZONE) <= now.getTime();

function heartDay(user: string, date: string, now: Date) {
  const ms = minutes(user, date);
  const midnight = localMs(date, 0, ZONE);
  const done = localMs(shiftDate(date, 1), 0, ZONE) <= now.getTime();
  const dataset = settled(date, now)
    ? ms.flatMap((m, i) => (m.hr !== null && midnight + (i + 1) * 60_000 <= now.getTime() ? [{ time: localText(midnight + i * 60_000).slice(11, 19), value: m.hr }] : []))
    : [];
  const zones = [
    { name: 'Out of Range', min: 30, max: 101 },
    { name: 'Fat Burn', min: 101, max: 140 },
    { name: 'Cardio', min: 140, max: 170 },
    { name: 'Peak', min: 170, max: 220 },
  ].map((z) => ({ ...z, minutes: dataset.filter((p) => p.value >= z.min && p.value < z.max).length, caloriesOut: 0 }));
  return {
    'activities-heart': [{ dateTime: date, value: { customHeartRateZones: [], heartRateZones: zones, ...(done ? { restingHeartRate: restingOf(user, date) } : {}) } }],
    'activities-heart-intraday': { dataset, datasetInterval: 1, datasetType: 'minute' },
  };
}

function stepsDay(user: string, date: string, now: Date) {
  const midnight = localMs(date, 0, ZONE);
  const dataset = settled(date, now) ? minutes(user, date).flatMap((m, i) => (midnight + (i + 1) * 60_000 <= now.getTime() ? [{ time: localText(midnight + i * 60_000).slice(11, 19), value: m.steps }] : [])) : [];
  return { 'activities-steps': [{ dateTime: date, value: String(dataset.reduce((s, p) => s + p.value, 0)) }], 'activities-steps-intraday': { dataset, datasetInterval: 1, datasetType: 'minute' } };
}

function activityLog(user: string, run: Run) {
  const r = seeded(user, run.logId, 'fitbit-log');
  const steps = Math.round(run.minutes * (run.name === 'Run' ? 166 : 110));
  const km = Math.round(steps * (run.name === 'Run' ? 0.00105 : 0.00072) * 1000) / 1000;
  return {
    logId: run.logId,
    activityName: run.name,
    activityTypeId: run.name === 'Run' ? 90009 : 90013,
    logType: 'auto_detected',
    startTime: withOffset(run.start),
    originalStartTime: withOffset(run.start),
    duration: run.minutes * 60_000,
    originalDuration: run.minutes * 60_000,
    activeDuration: (run.minutes - (run.name === 'Run' ? 1 : 0)) * 60_000,
    calories: Math.round(run.minutes * (run.name === 'Run' ? 11.5 : 5) + between(r, -10, 10)),
    distance: km,
    distanceUnit: 'Kilometer',
    steps,
    averageHeartRate: Math.round(between(r, run.name === 'Run' ? 148 : 105, run.name === 'Run' ? 158 : 112)),
    elevationGain: between(r, 5, 60, 1),
    hasGps: false,
    lastModified: withOffset(run.start + run.minutes * 60_000 + 600_000),
    source: { type: 'tracker', name: 'Charge 6', id: '2417581', url: 'https://www.fitbit.com/', trackerFeatures: ['HEARTRATE', 'STEPS', 'CALORIES', 'DISTANCE'] },
  };
}

function summaryDay(user: string, date: string, now: Date) {
  const steps = stepsDay(user, date, now)['activities-steps-intraday'].dataset;
  const total = steps.reduce((s, p) => s + p.value, 0);
  const run = runOf(user, date);
  const ran = run && run.start + run.minutes * 60_000 <= now.getTime() ? activityLog(user, run) : null;
  const bmr = 1650 + (stableId(user, 'bmr') % 60);
  const dayFraction = Math.min(1, steps.length / 1440);
  const active = Math.round(total * 0.045 + (ran ? ran.calories * 0.6 : 0));
  const km = Math.round(total * 0.00078 * 100) / 100;
  const moving = steps.filter((p) => p.value > 0).length;
  return {
    activities: ran ? [ran] : [],
    goals: { activeMinutes: 30, caloriesOut: 2500, distance: 8.05, floors: 10, steps: 10000 },
    summary: {
      activeScore: -1,
      activityCalories: active,
      caloriesBMR: Math.round(bmr * dayFraction),
      caloriesOut: Math.round(bmr * dayFraction) + active,
      distances: [
        { activity: 'total', distance: km },
        { activity: 'tracker', distance: km },
        { activity: 'veryActive', distance: ran ? ran.distance : 0 },
        { activity: 'sedentaryActive', distance: 0 },
      ],
      elevation: 21.34,
      floors: 7,
      fairlyActiveMinutes: Math.round(moving * 0.2),
      lightlyActiveMinutes: Math.round(moving * 0.6),
      veryActiveMinutes: ran ? run!.minutes : 0,
      sedentaryMinutes: Math.max(0, steps.length - moving),
      marginalCalories: Math.round(active * 0.6),
      steps: total,
      ...(steps.length >= 1440 ? { restingHeartRate: restingOf(user, date) } : {}),
    },
  };
}

function sleepLog(user: string, date: string) {
  const n = night(user, date);
  const sum: Record<string, { count: number; minutes: number }> = {};
  for (const l of n.levels) {
    const s = (sum[l.level] ??= { count: 0, minutes: 0 });
    s.count++;
    s.minutes += l.seconds / 60;
  }
  const awakeLevels = n.classic ? ['awake', 'restless'] : ['wake'];
  const shortMinutes = n.short.reduce((s, w) => s + w.seconds / 60, 0);
  const inBed = Math.round((n.end - n.start) / 60_000);
  const awake = Math.round(awakeLevels.reduce((s, l) => s + (sum[l]?.minutes ?? 0), 0) + shortMinutes);
  return {
    dateOfSleep: date,
    duration: n.end - n.start,
    efficiency: Math.round(((inBed - awake) / inBed) * 100),
    startTime: localText(n.start),
    endTime: localText(n.end),
    infoCode: 0,
    isMainSleep: true,
    logId: n.logId,
    logType: 'auto_detected',
    minutesAfterWakeup: 0,
    minutesAsleep: inBed - awake,
    minutesAwake: awake,
    minutesToFallAsleep: 0,
    timeInBed: inBed,
    type: n.classic ? 'classic' : 'stages',
    levels: {
      data: n.levels.map((l) => ({ dateTime: localText(l.at), level: l.level, seconds: l.seconds })),
      ...(n.classic ? {} : { shortData: n.short.map((w) => ({ dateTime: localText(w.at), level: 'wake', seconds: w.seconds })) }),
      summary: Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, { count: v.count, minutes: Math.round(v.minutes), ...(n.classic ? {} : { thirtyDayAvgMinutes: 0 }) }])),
    },
  };
}

const nightly = (user: string, date: string, kind: string) => seeded(user, date, `fitbit-${kind}`);

/** The range endpoints: their path pattern, longest range in days, and what one date answers. */
const RANGES: readonly { re: RegExp; maxDays: number; answer: (user: string, dates: string[], now: Date) => unknown }[] = [
  { re: /^\/1\.2\/user\/-\/sleep\/date\/([^/]+)\/([^/]+)\.json$/, maxDays: 100, answer: (u, ds, now) => ({ sleep: ds.filter((d) => night(u, d).end <= now.getTime()).reverse().map((d) => sleepLog(u, d)) }) },
  { re: /^\/1\/user\/-\/hrv\/date\/([^/]+)\/([^/]+)\.json$/, maxDays: 30, answer: (u, ds, now) => ({ hrv: ds.filter((d) => night(u, d).end <= now.getTime()).map((d) => { const r = nightly(u, d, 'hrv'); return { value: { dailyRmssd: between(r, 28, 55, 3), deepRmssd: between(r, 30, 62, 3) }, dateTime: d }; }) }) },
  { re: /^\/1\/user\/-\/spo2\/date\/([^/]+)\/([^/]+)\.json$/, maxDays: 30, answer: (u, ds, now) => ds.filter((d) => night(u, d).end <= now.getTime()).map((d) => { const r = nightly(u, d, 'spo2'); const avg = between(r, 94.5, 97.8, 1); return { dateTime: d, value: { avg, min: Math.round(avg - between(r, 2, 4, 1)), max: Math.min(100, Math.round(avg + between(r, 1, 2.5, 1))) } }; }) },
  { re: /^\/1\/user\/-\/br\/date\/([^/]+)\/([^/]+)\.json$/, maxDays: 30, answer: (u, ds, now) => ({ br: ds.filter((d) => night(u, d).end <= now.getTime()).map((d) => ({ value: { breathingRate: between(nightly(u, d, 'br'), 13.2, 16.8, 1) }, dateTime: d })) }) },
  { re: /^\/1\/user\/-\/body\/log\/weight\/date\/([^/]+)\/([^/]+)\.json$/, maxDays: 31, answer: (u, ds, now) => ({ weight: weights(u, ds, now).map(({ fat: _fat, ...w }) => w) }) },
  { re: /^\/1\/user\/-\/body\/log\/fat\/date\/([^/]+)\/([^/]+)\.json$/, maxDays: 31, answer: (u, ds, now) => ({ fat: weights(u, ds, now).map((w) => ({ date: w.date, fat: w.fat, logId: w.logId, source: w.source, time: w.time })) }) },
];

function weights(user: string, dates: string[], now: Date) {
  return dates.flatMap((d) => {
    const w = weightOf(user, d);
    return w && localMs(d, 8 * 60, ZONE) <= now.getTime() ? [w] : [];
  });
}

const fitbitError = (status: number, errorType: string, message: string) => ({ status, body: { errors: [{ errorType, message }], success: false } });

/** Fitbit's user id: six characters, derived from the sandbox user. */
export function fitbitUserId(user: string): string {
  return user.slice(0, 6).toUpperCase();
}

function profile(user: string, now: Date) {
  return {
    user: {
      encodedId: fitbitUserId(user),
      displayName: 'Sandbox',
      fullName: 'Sandbox Wearer',
      timezone: ZONE,
      offsetFromUTCMillis: offsetMinutes(now.getTime(), ZONE) * 60_000,
      locale: 'fr_FR',
      distanceUnit: 'METRIC',
      weightUnit: 'METRIC',
      heightUnit: 'METRIC',
      height: 178,
      memberSince: '2021-03-14',
    },
  };
}

function activityList(user: string, q: URLSearchParams, now: Date) {
  const after = q.get('afterDate');
  const before = q.get('beforeDate');
  const sort = q.get('sort');
  const limit = Number(q.get('limit') ?? '20');
  const offset = Number(q.get('offset') ?? '0');
  if ((after === null) === (before === null)) return fitbitError(400, 'validation', 'Exactly one of beforeDate or afterDate is required');
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return fitbitError(400, 'validation', 'limit must be between 1 and 100');
  if (!Number.isInteger(offset) || offset < 0) return fitbitError(400, 'validation', 'offset must be 0 or more');
  if (after !== null && sort !== 'asc') return fitbitError(400, 'validation', 'sort must be asc with afterDate');
  if (before !== null && sort !== 'desc') return fitbitError(400, 'validation', 'sort must be desc with beforeDate');
  const bound = Date.parse(((after ?? before)!.length === 10 ? `${after ?? before}T00:00:00` : (after ?? before)!) + 'Z');
  if (!Number.isFinite(bound)) return fitbitError(400, 'validation', 'afterDate and beforeDate are yyyy-MM-dd or yyyy-MM-ddTHH:mm:ss');
  const boundMs = DateTime.fromISO(new Date(bound).toISOString().slice(0, 19), { zone: ZONE }).toMillis();
  const today = localDay(now.getTime(), ZONE);
  const days = after !== null ? datesBetween(localDay(boundMs, ZONE), today) : datesBetween(shiftDate(localDay(boundMs, ZONE), -365), localDay(boundMs, ZONE)).reverse();
  const runs = days
    .map((d) => runOf(user, d))
    .filter((r): r is Run => r !== null && r.start + r.minutes * 60_000 <= now.getTime() && (after !== null ? r.start > boundMs : r.start < boundMs));
  const page = runs.slice(offset, offset + limit).map((r) => activityLog(user, r));
  const link = (o: number) => {
    const u = new URL('https://api.fitbit.com/1/user/-/activities/list.json');
    if (before !== null) u.searchParams.set('beforeDate', before);
    else u.searchParams.set('afterDate', after!);
    u.searchParams.set('sort', sort!);
    u.searchParams.set('offset', String(o));
    u.searchParams.set('limit', String(limit));
    return u.toString();
  };
  return {
    status: 200,
    body: {
      activities: page,
      pagination: { ...(after !== null ? { afterDate: after } : { beforeDate: before }), limit, offset, sort, next: offset + limit < runs.length ? link(offset + limit) : '', previous: offset > 0 ? link(Math.max(0, offset - limit)) : '' },
    },
  };
}

const calls = new WeakMap<IssuedToken, { hour: number; used: number }>();

/** Counts the call against the token's hour; the headers Fitbit sends, or the 429 once the hour is spent. */
function rateLimit(token: IssuedToken, now: Date): { headers: Record<string, string>; refused: boolean } {
  const hour = Math.floor(now.getTime() / 3_600_000);
  const c = calls.get(token);
  const count = c && c.hour === hour ? c : { hour, used: 0 };
  count.used++;
  calls.set(token, count);
  const reset = String(Math.ceil(((hour + 1) * 3_600_000 - now.getTime()) / 1000));
  const headers = { 'fitbit-rate-limit-limit': String(HOURLY_CALLS), 'fitbit-rate-limit-remaining': String(Math.max(0, HOURLY_CALLS - count.used)), 'fitbit-rate-limit-reset': reset };
  return count.used > HOURLY_CALLS ? { headers: { ...headers, 'retry-after': reset }, refused: true } : { headers, refused: false };
}

export const fitbitData: DataHandler = ({ method, path, query, token, now }) => {
  if (method !== 'GET') return null;
  const limit = rateLimit(token, now);
  if (limit.refused) return { ...fitbitError(429, 'system', 'Too Many Requests'), headers: limit.headers };
  const answer = route(path, query, token.user, now);
  return answer ? { ...answer, headers: limit.headers } : null;
};

function route(path: string, query: URLSearchParams, user: string, now: Date): { status: number; body: unknown } | null {
  if (path === '/1/user/-/profile.json') return { status: 200, body: profile(user, now) };
  if (path === '/1/user/-/activities/list.json') return activityList(user, query, now);
  let m = /^\/1\/user\/-\/activities\/date\/([^/]+)\.json$/.exec(path);
  if (m) return DATE.test(m[1]!) ? { status: 200, body: summaryDay(user, m[1]!, now) } : fitbitError(400, 'validation', 'Invalid date');
  m = /^\/1\/user\/-\/activities\/(heart|steps)\/date\/([^/]+)\/1d\/1min\.json$/.exec(path);
  if (m) {
    if (!DATE.test(m[2]!)) return fitbitError(400, 'validation', 'Invalid date');
    return { status: 200, body: m[1] === 'heart' ? heartDay(user, m[2]!, now) : stepsDay(user, m[2]!, now) };
  }
  for (const r of RANGES) {
    m = r.re.exec(path);
    if (!m) continue;
    const [start, end] = [m[1]!, m[2]!];
    if (!DATE.test(start) || !DATE.test(end) || end < start) return fitbitError(400, 'validation', 'Invalid date range');
    const dates = datesBetween(start, end, r.maxDays + 1);
    if (dates.length > r.maxDays) return fitbitError(400, 'validation', `The date range is longer than ${r.maxDays} days`);
    return { status: 200, body: r.answer(user, dates, now) };
  }
  return null;
}
