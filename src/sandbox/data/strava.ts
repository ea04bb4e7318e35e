import { DateTime } from 'luxon';
import type { DataHandler, IssuedToken } from '../sandboxTypes.js';
import { between, datesBetween, localDay, localMs, seeded, shiftDate, stableId } from './sandboxSeries.js';

/**
 * Strava API v3 in the sandbox: an athlete living in Paris who rides, runs and swims, now and then
 * on a trip to New York, with a typed-in gym session from time to time. Activities are generated
 * from (sandbox user, local date) in Strava's shapes: the list filtered by `after`/`before` epoch
 * seconds and paged by `page`/`per_page`, streams keyed by type (route, altitude, heart rate,
 * speed, distance) for every recorded activity, `start_date` in UTC beside the local
 * `start_date_local` written with a `Z`, `timezone` as "(GMT+01:00) Europe/Paris", and the read
 * rate limits (100 per 15 minutes, 1,000 a day) in `X-ReadRateLimit-*` headers, 429 once spent.
 */
const HOME = { zone: 'Europe/Paris', lat: 48.8566, lng: 2.3522 };
const TRIP = { zone: 'America/New_York', lat: 40.7812, lng: -73.9665 };
const ID_BASE = 9_000_000_000;
const LIMITS = { quarter: 100, day: 1000 };

type Sport = 'Ride' | 'Run' | 'Swim' | 'WeightTraining';
type Activity = { id: number; date: string; sport: Sport; start: number; elapsed: number; moving: number; place: typeof HOME; manual: boolean };

const dayNumber = (date: string) => Math.floor(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
const userTag = (user: string) => stableId(user, 'strava-athlete') % 1000;

function activityOn(user: string, date: string): Activity | null {
  const r = seeded(user, date, 'strava-activity');
  const pick = r();
  // Never two rest days in a row: every even day has at least a run, so any few days hold an activity.
  const sport: Sport | null = pick < 0.3 ? 'Ride' : pick < 0.6 ? 'Run' : pick < 0.68 ? 'Swim' : pick < 0.75 ? 'WeightTraining' : dayNumber(date) % 2 === 0 ? 'Run' : null;
  if (!sport) return null;
  const place = dayNumber(date) % 9 === 0 ? TRIP : HOME;
  const startMinute = Math.round(sport === 'Ride' ? between(r, 17 * 60, 18 * 60 + 30) : between(r, 7 * 60, 8 * 60 + 30));
  const moving = Math.round(sport === 'Ride' ? between(r, 3600, 7200) : sport === 'Run' ? between(r, 1800, 3600) : between(r, 1800, 3000));
  return { id: ID_BASE + dayNumber(date) * 1000 + userTag(user), date, sport, start: localMs(date, startMinute, place.zone), elapsed: moving + Math.round(between(r, 0, 420)), moving, place, manual: sport === 'WeightTraining' };
}

function activityById(user: string, id: number): Activity | null {
  if (!Number.isInteger(id) || id < ID_BASE || id % 1000 !== userTag(user)) return null;
  const date = new Date(Math.floor((id - ID_BASE) / 1000) * 86_400_000).toISOString().slice(0, 10);
  return activityOn(user, date);
}

const SPEED: Record<Sport, number> = { Ride: 7.4, Run: 3.1, Swim: 0.7, WeightTraining: 0 };

/** One point every 5 seconds: a loop around the start, speed and heart rate drifting with the effort. */
function track(user: string, a: Activity) {
  const r = seeded(user, a.id, 'strava-track');
  const points = Math.floor(a.elapsed / 5) + 1;
  const radius = (SPEED[a.sport] * a.moving) / (2 * Math.PI);
  const out = { time: [] as number[], latlng: [] as [number, number][], altitude: [] as number[], heartrate: [] as number[], velocity_smooth: [] as number[], distance: [] as number[] };
  let distance = 0;
  for (let i = 0; i < points; i++) {
    const t = Math.min(i * 5, a.elapsed);
    const speed = Math.max(0, SPEED[a.sport] * (1 + between(r, -0.12, 0.12, 3)));
    distance += i === 0 ? 0 : speed * 5 * (a.moving / a.elapsed);
    const angle = (distance / Math.max(1, radius)) % (2 * Math.PI);
    out.time.push(t);
    out.latlng.push([Math.round((a.place.lat + (radius * Math.sin(angle)) / 111_320) * 1e6) / 1e6, Math.round((a.place.lng + (radius * (1 - Math.cos(angle))) / (111_320 * Math.cos((a.place.lat * Math.PI) / 180))) * 1e6) / 1e6]);
    out.altitude.push(Math.round((35 + 12 * Math.sin(angle * 3)) * 10) / 10);
    out.heartrate.push(Math.round(Math.min(185, 95 + (a.sport === 'Swim' ? 35 : 55) * Math.min(1, t / 600) + between(r, -4, 4))));
    out.velocity_smooth.push(Math.round(speed * 100) / 100);
    out.distance.push(Math.round(distance * 10) / 10);
  }
  return out;
}

const localZ = (ms: number, zone: string) => DateTime.fromMillis(ms, { zone }).toFormat("yyyy-MM-dd'T'HH:mm:ss'Z'");
const utcZ = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function summary(user: string, a: Activity) {
  const t = a.manual ? null : track(user, a);
  const offset = DateTime.fromMillis(a.start, { zone: a.place.zone }).offset;
  const gmt = `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
  const distance = t ? t.distance[t.distance.length - 1]! : 0;
  const hr = t ? t.heartrate : [];
  return {
    resource_state: 2,
    athlete: { id: stravaAthleteId(user), resource_state: 1 },
    name: { Ride: 'Evening Ride', Run: 'Morning Run', Swim: 'Morning Swim', WeightTraining: 'Gym' }[a.sport],
    distance,
    moving_time: a.moving,
    elapsed_time: a.elapsed,
    total_elevation_gain: t ? Math.round(between(seeded(user, a.id, 'gain'), 20, 240)) : 0,
    type: a.sport,
    sport_type: a.sport,
    id: a.id,
    start_date: utcZ(a.start),
    start_date_local: localZ(a.start, a.place.zone),
    timezone: `(GMT${gmt}) ${a.place.zone}`,
    utc_offset: offset * 60,
    location_city: null,
    achievement_count: 0,
    kudos_count: 2,
    comment_count: 0,
    athlete_count: 1,
    photo_count: 0,
    map: { id: `a${a.id}`, summary_polyline: t && a.sport !== 'Swim' ? 'sandbox' : '', resource_state: 2 },
    trainer: false,
    commute: false,
    manual: a.manual,
    private: false,
    visibility: 'everyone',
    flagged: false,
    gear_id: a.sport === 'Ride' ? 'b1234567' : null,
    start_latlng: t && a.sport !== 'Swim' ? t.latlng[0] : [],
    end_latlng: t && a.sport !== 'Swim' ? t.latlng[t.latlng.length - 1] : [],
    average_speed: a.moving ? Math.round((distance / a.moving) * 1000) / 1000 : 0,
    max_speed: t ? Math.max(...t.velocity_smooth) : 0,
    ...(a.sport === 'Ride' ? { average_watts: 182.4, kilojoules: Math.round(182.4 * a.moving) / 1000, device_watts: false } : {}),
    has_heartrate: hr.length > 0,
    ...(hr.length ? { average_heartrate: Math.round((hr.reduce((s, h) => s + h, 0) / hr.length) * 10) / 10, max_heartrate: Math.max(...hr) } : {}),
    heartrate_opt_out: false,
    display_hide_heartrate_option: hr.length > 0,
    upload_id: a.manual ? null : a.id + 7,
    external_id: a.manual ? null : `garmin_push_${a.id}`,
    from_accepted_tag: false,
    pr_count: 0,
    total_photo_count: 0,
    has_kudoed: false,
  };
}

/** Strava answers errors as `{message, errors: [{resource, field, code}]}`. */
const stravaError = (status: number, message: string, field: string, code: string) => ({ status, body: { message, errors: [{ resource: 'Application', field, code }] } });

function activities(user: string, q: URLSearchParams, now: Date) {
  const num = (name: string, fallback: number) => (q.has(name) ? Number(q.get(name)) : fallback);
  const before = num('before', Math.floor(now.getTime() / 1000));
  const after = num('after', before - 365 * 86_400);
  const page = num('page', 1);
  const perPage = num('per_page', 30);
  if (![before, after, page, perPage].every(Number.isInteger) || page < 1 || perPage < 1 || perPage > 200) return stravaError(400, 'Bad Request', 'per_page', 'invalid');
  const from = Math.max(after * 1000, now.getTime() - 3 * 365 * 86_400_000);
  const to = Math.min(before * 1000, now.getTime());
  if (to <= from) return { status: 200, body: [] };
  const list = datesBetween(shiftDate(localDay(from, 'UTC'), -1), shiftDate(localDay(to, 'UTC'), 1), 1200)
    .map((d) => activityOn(user, d))
    .filter((a): a is Activity => a !== null && a.start > after * 1000 && a.start < before * 1000 && a.start + a.elapsed * 1000 <= now.getTime());
  // Strava lists from the oldest when asked for activities after a time, else from the newest.
  if (!q.has('after')) list.reverse();
  return { status: 200, body: list.slice((page - 1) * perPage, page * perPage).map((a) => summary(user, a)) };
}

function streams(user: string, id: number, q: URLSearchParams, now: Date) {
  const a = activityById(user, id);
  if (!a || a.start + a.elapsed * 1000 > now.getTime()) return { status: 404, body: { message: 'Record Not Found', errors: [{ resource: 'Activity', field: 'id', code: 'invalid' }] } };
  if (a.manual) return { status: 200, body: q.get('key_by_type') === 'true' ? {} : [] };
  const t = track(user, a);
  const keys = new Set(['time', 'distance', ...(q.get('keys') ?? '').split(',').map((k) => k.trim())]);
  const series = Object.entries(t)
    .filter(([k]) => keys.has(k) && !(a.sport === 'Swim' && (k === 'latlng' || k === 'altitude')))
    .map(([type, data]) => ({ type, data, series_type: 'distance', original_size: data.length, resolution: 'high' }));
  if (q.get('key_by_type') === 'true') return { status: 200, body: Object.fromEntries(series.map(({ type, ...s }) => [type, s])) };
  return { status: 200, body: series };
}

const usage = new WeakMap<IssuedToken, { quarter: number; day: number; inQuarter: number; inDay: number }>();

function rateLimit(token: IssuedToken, now: Date): { headers: Record<string, string>; refused: boolean } {
  const quarter = Math.floor(now.getTime() / 900_000);
  const day = Math.floor(now.getTime() / 86_400_000);
  const u = usage.get(token) ?? { quarter, day, inQuarter: 0, inDay: 0 };
  if (u.quarter !== quarter) Object.assign(u, { quarter, inQuarter: 0 });
  if (u.day !== day) Object.assign(u, { day, inDay: 0 });
  u.inQuarter++;
  u.inDay++;
  usage.set(token, u);
  const headers = {
    'x-ratelimit-limit': `${LIMITS.quarter * 2},${LIMITS.day * 2}`,
    'x-ratelimit-usage': `${u.inQuarter},${u.inDay}`,
    'x-readratelimit-limit': `${LIMITS.quarter},${LIMITS.day}`,
    'x-readratelimit-usage': `${u.inQuarter},${u.inDay}`,
  };
  return { headers, refused: u.inQuarter > LIMITS.quarter || u.inDay > LIMITS.day };
}

/** Strava's numeric athlete id of the sandbox user (the token answer's `athlete.id`). */
export function stravaAthleteId(user: string): number {
  return stableId(user, 'strava-athlete-id') % 100_000_000;
}

export const stravaData: DataHandler = ({ method, path, query, token, now }) => {
  if (method !== 'GET') return null;
  const limit = rateLimit(token, now);
  if (limit.refused) return { ...stravaError(429, 'Rate Limit Exceeded', 'rate limit', 'exceeded'), headers: limit.headers };
  let answer: { status: number; body: unknown } | null = null;
  if (path === '/api/v3/athlete/activities') answer = activities(token.user, query, now);
  const m = /^\/api\/v3\/activities\/(\d+)\/streams$/.exec(path);
  if (m) answer = streams(token.user, Number(m[1]), query, now);
  return answer ? { ...answer, headers: limit.headers } : null;
};
