import { DateTime } from 'luxon';
import { GOOGLE_DATA_TYPES } from '../../sources/providers/google/dataTypes.js';
import type { DataHandler } from '../sandboxTypes.js';
import { between, seeded } from './sandboxSeries.js';

/**
 * The Google Health API v4 in the sandbox: one Pixel Watch wearer in Zurich (summer and winter
 * time), `GET /v4/users/me/dataTypes/{type}/dataPoints` for the data types the connector reads,
 * filtered by the window the `filter` names (`… >= "start" AND … < "end"`, dates for daily types)
 * and paged by `pageToken` (`pageSize`, at most 1000, pages here of at most 200 points so paging is
 * exercised). Points are per source (each names the watch); nothing is reconciled. A window over
 * 90 days is refused as the API refuses unbounded reads.
 */
const ZONE = 'Europe/Zurich';
const PAGE = 200;
const HOUR = 3_600_000;
const MAX_WINDOW_MS = 90 * 86_400_000;
const DEVICE = { manufacturer: 'Google', displayName: 'Pixel Watch 4', formFactor: 'WATCH' };
const SCALE = { manufacturer: 'Withings', displayName: 'Body+', formFactor: 'SCALE' };

type Point = { at: number; point: Record<string, unknown> };
type Answer = { status: number; body: unknown };
const bad = (message: string): Answer => ({ status: 400, body: { error: { code: 400, message, status: 'INVALID_ARGUMENT' } } });

const offset = (ms: number) => `${DateTime.fromMillis(ms, { zone: ZONE }).offset * 60}s`;
const sample = (ms: number) => ({ physicalTime: new Date(ms).toISOString(), utcOffset: offset(ms) });
const interval = (a: number, b: number) => ({ startTime: new Date(a).toISOString(), startUtcOffset: offset(a), endTime: new Date(b).toISOString(), endUtcOffset: offset(b) });
const localAt = (date: string, hour: number, minute = 0) => DateTime.fromISO(date, { zone: ZONE }).set({ hour, minute }).toMillis();

function pointsOn(user: string, type: string, date: string): Point[] {
  const r = seeded(user, type, date);
  const name = (at: number, n = 0) => `users/me/dataTypes/${type}/dataPoints/${at}${n ? `-${n}` : ''}`;
  const p = (at: number, body: Record<string, unknown>, n = 0): Point => ({ at, point: { name: name(at, n), dataSource: { recordingMethod: 'PASSIVELY_MEASURED', device: DEVICE, platform: 'FITBIT' }, ...body } });
  // Weighings come from a scale another app wrote to Google Health: another source, not worn.
  const scale = (at: number, body: Record<string, unknown>): Point => ({ at, point: { name: name(at), dataSource: { recordingMethod: 'ACTIVELY_MEASURED', device: SCALE, platform: 'HEALTH_CONNECT' }, ...body } });
  const hours = Array.from({ length: 15 }, (_, i) => localAt(date, 7 + i));
  switch (type) {
    case 'heart-rate':
      return Array.from({ length: 144 }, (_, i) => localAt(date, 0, i * 10)).map((at) => p(at, { heartRate: { sampleTime: sample(at), beatsPerMinute: String(between(r, 55, 110)) } }));
    case 'steps':
      return hours.map((at) => p(at, { steps: { interval: interval(at, at + HOUR), count: String(between(r, 200, 1500)) } }));
    case 'distance':
      return hours.map((at) => p(at, { distance: { interval: interval(at, at + HOUR), millimeters: String(between(r, 150_000, 1_100_000)) } }));
    case 'active-energy-burned':
      return hours.map((at) => p(at, { activeEnergyBurned: { interval: interval(at, at + HOUR), kilocalories: between(r, 10, 90, 1) } }));
    case 'sleep': {
      const start = localAt(date, 23, between(r, 0, 40));
      const stages = ['LIGHT', 'DEEP', 'LIGHT', 'REM', 'AWAKE', 'LIGHT', 'DEEP', 'REM', 'LIGHT', 'REM'];
      let t = start;
      const list = stages.map((type) => {
        const minutes = type === 'AWAKE' ? 5 : between(r, 35, 55);
        const s = { startTime: new Date(t).toISOString(), endTime: new Date(t + minutes * 60_000).toISOString(), type };
        t += minutes * 60_000;
        return s;
      });
      return [p(start, { sleep: { interval: interval(start, t), type: 'STAGES', stages: list } })];
    }
    case 'exercise': {
      if (Number(date.slice(8)) % 2) return [];
      const at = localAt(date, 18);
      return [p(at, { exercise: { interval: interval(at, at + 40 * 60_000), exerciseType: 'RUNNING', displayName: 'Evening run', activeDuration: '2340s', metricsSummary: { caloriesKcal: between(r, 350, 480), distanceMillimeters: String(between(r, 6_500_000, 8_000_000)), averageHeartRateBeatsPerMinute: between(r, 140, 160), steps: String(between(r, 6000, 7200)) } } })];
    }
    case 'weight': {
      const at = localAt(date, 7, 30);
      return [scale(at, { weight: { sampleTime: sample(at), weightGrams: between(r, 71_000, 73_000) } })];
    }
    case 'body-fat': {
      const at = localAt(date, 7, 30);
      return [scale(at, { bodyFat: { sampleTime: sample(at), percentage: between(r, 18, 20, 1) } })];
    }
    case 'oxygen-saturation': {
      const at = localAt(date, 4);
      return [p(at, { oxygenSaturation: { sampleTime: sample(at), percentage: between(r, 94, 99, 1) } })];
    }
    case 'heart-rate-variability': {
      const at = localAt(date, 4);
      return [p(at, { heartRateVariability: { sampleTime: sample(at), rootMeanSquareOfSuccessiveDifferencesMilliseconds: between(r, 30, 60, 1) } })];
    }
    case 'daily-resting-heart-rate':
      return [p(localAt(date, 0), { dailyRestingHeartRate: { date: civil(date), beatsPerMinute: String(between(r, 52, 60)) } })];
    case 'daily-respiratory-rate':
      return [p(localAt(date, 0), { dailyRespiratoryRate: { date: civil(date), breathsPerMinute: between(r, 13, 16, 1) } })];
    case 'vo2-max': {
      const at = localAt(date, 8);
      return [p(at, { vo2Max: { sampleTime: sample(at), vo2Max: between(r, 44, 46, 1) } })];
    }
    default:
      return [];
  }
}

const civil = (date: string) => ({ year: Number(date.slice(0, 4)), month: Number(date.slice(5, 7)), day: Number(date.slice(8, 10)) });

/** The window a filter names: `>= "a"` and `< "b"` (instants), or `>= "d1"` and `<= "d2"` (dates). */
function windowOf(filter: string): { from: number; to: number; daily: boolean } | null {
  const ge = /(\w[\w.]*) >= "([^"]+)"/.exec(filter);
  const lt = /(\w[\w.]*) (<=?) "([^"]+)"/.exec(filter.slice(ge ? ge.index + ge[0].length : 0));
  if (!ge || !lt) return null;
  const daily = ge[1]!.endsWith('.date');
  const from = Date.parse(daily ? `${ge[2]}T00:00:00Z` : ge[2]!);
  const to = daily ? Date.parse(`${lt[3]}T00:00:00Z`) + 86_400_000 : Date.parse(lt[3]!);
  return Number.isNaN(from) || Number.isNaN(to) || from >= to ? null : { from, to, daily };
}

/** The sandbox wearer's Google Health user id (`users/me/identity`), named in its notifications. */
export const googleHealthUserId = (user: string) => `gh${user}`;

export const googleData: DataHandler = ({ method, path, query, token, now }) => {
  if (method === 'GET' && path === '/v4/users/me/identity') return { status: 200, body: { name: 'users/me/identity', healthUserId: googleHealthUserId(token.user) } };
  const m = /^\/v4\/users\/me\/dataTypes\/([a-z0-9-]+)\/dataPoints$/.exec(path);
  if (!m || method !== 'GET') return null;
  const type = m[1]!;
  const known = GOOGLE_DATA_TYPES.find((d) => d.id === type);
  if (!known) return { status: 404, body: { error: { code: 404, message: `unknown data type ${type}`, status: 'NOT_FOUND' } } };
  if (!token.scope.split(' ').includes(known.scope)) return { status: 403, body: { error: { code: 403, message: 'the grant does not cover this data type', status: 'PERMISSION_DENIED' } } };
  const window = windowOf(query.get('filter') ?? '');
  if (!window) return bad('filter must bound the data points by a start and an end');
  if (window.to - window.from > MAX_WINDOW_MS) return bad('the filter spans more than 90 days');
  const pageSize = Math.min(Number(query.get('pageSize') ?? 100) || 100, 1000, PAGE);
  const offsetIn = Number(query.get('pageToken') ?? 0);
  if (!Number.isInteger(offsetIn) || offsetIn < 0) return bad('invalid pageToken');
  const nowMs = now.getTime();
  const dates: string[] = [];
  for (let d = DateTime.fromMillis(window.from, { zone: ZONE }).minus({ days: 1 }).startOf('day'); d.toMillis() < window.to; d = d.plus({ days: 1 })) dates.push(d.toISODate()!);
  const all = dates
    .flatMap((d) => pointsOn(token.user, type, d))
    .filter((x) => {
      // Only what has happened: an interval or a night is served once it ended.
      const body = Object.values(x.point).find((v) => v && typeof v === 'object' && ('interval' in (v as object) || 'sampleTime' in (v as object) || 'date' in (v as object))) as Record<string, { endTime?: string }> | undefined;
      const ends = body?.interval?.endTime ? Date.parse(body.interval.endTime) : x.at;
      return x.at >= window.from && x.at < window.to && ends <= nowMs;
    });
  const page = all.slice(offsetIn, offsetIn + pageSize);
  const next = offsetIn + pageSize < all.length ? String(offsetIn + pageSize) : undefined;
  return { status: 200, body: { dataPoints: page.map((x) => x.point), ...(next ? { nextPageToken: next } : {}) } };
};
