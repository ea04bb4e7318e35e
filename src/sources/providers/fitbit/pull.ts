import { ProviderCallError } from '../../shared/oauthClient.js';
import type { ProviderAnswer, ProviderRequest, PullConnector, PullContext, PulledPayload } from '../../shared/pullConnector.js';
import { isObject } from '../../shared/recordError.js';
import { grantedScope } from '../../shared/pullSelection.js';
import { localZone, nextDate, zonedDates, type LocalZone } from '../../shared/zonedLocalTime.js';
import { COLLECTIONS, FITBIT_DATA_TYPES, isFitbitDataType, SCOPE_OF, type FitbitDataType } from './dataTypes.js';
import { wrapAnswer, type ProfileZone } from './fitbitPayload.js';
import { fitbitParser } from './parser.js';
import { fitbit } from './provider.js';

/** Fitbit's range endpoints answer at most 30 days (HRV, SpO2, breathing rate) or 31 (body logs) per call. */
const RANGE_DAYS = 30;
/** Activity log pages: Fitbit's largest `limit`. */
const LOG_PAGE = 100;

type Planned = { dataType: FitbitDataType; request: ProviderRequest; date?: string };

/** The data types a run pulls: the one a notification named (or its collection's), else all, less those the grant does not cover. */
export function wantedDataTypes(ctx: PullContext): FitbitDataType[] {
  const named = ctx.dataType === null ? FITBIT_DATA_TYPES : isFitbitDataType(ctx.dataType) ? [ctx.dataType] : (COLLECTIONS[ctx.dataType] ?? []);
  return named.filter((t) => grantedScope(ctx, SCOPE_OF[t]));
}

/** The requests of one data type over the local dates the window touches. */
export function plan(dataType: FitbitDataType, dates: readonly string[]): Planned[] {
  const first = dates[0]!;
  const last = dates[dates.length - 1]!;
  const perDay = (path: (d: string) => string) => dates.map((d) => ({ dataType, date: d, request: { path: path(d) } }));
  const ranged = (path: (s: string, e: string) => string, until = last) => {
    const out: Planned[] = [];
    for (let s = first; s <= until; s = nextDate(s, RANGE_DAYS)) {
      const e = nextDate(s, RANGE_DAYS - 1) < until ? nextDate(s, RANGE_DAYS - 1) : until;
      out.push({ dataType, request: { path: path(s, e) } });
    }
    return out;
  };
  // A night is filed under the date it ends: a sleep begun on the window's last evening ends the day after.
  const night = nextDate(last);
  switch (dataType) {
    case 'activity_summary':
      return perDay((d) => `/1/user/-/activities/date/${d}.json`);
    case 'heart_intraday':
      return perDay((d) => `/1/user/-/activities/heart/date/${d}/1d/1min.json`);
    case 'steps_intraday':
      return perDay((d) => `/1/user/-/activities/steps/date/${d}/1d/1min.json`);
    case 'activity_logs':
      return [{ dataType, request: { path: '/1/user/-/activities/list.json', query: { afterDate: first, sort: 'asc', offset: '0', limit: String(LOG_PAGE) } } }];
    case 'sleep':
      return ranged((s, e) => `/1.2/user/-/sleep/date/${s}/${e}.json`, night);
    case 'hrv':
      return ranged((s, e) => `/1/user/-/hrv/date/${s}/${e}.json`, night);
    case 'spo2':
      return ranged((s, e) => `/1/user/-/spo2/date/${s}/${e}.json`, night);
    case 'breathing_rate':
      return ranged((s, e) => `/1/user/-/br/date/${s}/${e}.json`, night);
    case 'weight':
      return ranged((s, e) => `/1/user/-/body/log/weight/date/${s}/${e}.json`);
    case 'body_fat':
      return ranged((s, e) => `/1/user/-/body/log/fat/date/${s}/${e}.json`);
  }
}

/**
 * Fitbit allows 150 calls an hour per user and says how many are left in `Fitbit-Rate-Limit-Remaining`
 * (and the seconds to the hour's reset in `Fitbit-Rate-Limit-Reset`): the run stops as rate limited
 * before a call that would be refused, and resumes after the reset.
 */
export function rateLimitLeft(answer: ProviderAnswer): { remaining: number; resetSeconds: number } | null {
  const remaining = Number(answer.headers.get('fitbit-rate-limit-remaining') ?? Number.NaN);
  if (!Number.isFinite(remaining)) return null;
  const reset = Number(answer.headers.get('fitbit-rate-limit-reset') ?? Number.NaN);
  return { remaining, resetSeconds: Number.isFinite(reset) && reset >= 0 ? reset : 3600 };
}

async function profileZone(ctx: PullContext): Promise<ProfileZone> {
  if (!grantedScope(ctx, 'profile')) return { timezone: null, offsetFromUTCMillis: 0 };
  const answer = await ctx.http({ path: '/1/user/-/profile.json' });
  if (answer.status !== 200) return { timezone: null, offsetFromUTCMillis: 0 };
  const user = answer.json<{ user?: unknown }>().user;
  const zone: LocalZone = localZone(isObject(user) ? user.timezone : null, isObject(user) ? user.offsetFromUTCMillis : null);
  return { timezone: zone.name, offsetFromUTCMillis: zone.offsetMs };
}

const refOf = (r: ProviderRequest) => (r.query ? `${r.path}?${new URLSearchParams(r.query).toString()}` : r.path);

async function* pull(ctx: PullContext): AsyncIterable<PulledPayload> {
  const types = wantedDataTypes(ctx);
  if (types.length === 0 || ctx.window.end <= ctx.window.start) return;
  const zone = await profileZone(ctx);
  const local = localZone(zone.timezone, zone.offsetFromUTCMillis);
  const dates = zonedDates(ctx.window.start.getTime(), ctx.window.end.getTime(), local);
  const queue: Planned[] = types.flatMap((t) => plan(t, dates));
  let left: ReturnType<typeof rateLimitLeft> = null;
  while (queue.length) {
    const next = queue.shift()!;
    if (left && left.remaining <= 0) throw new ProviderCallError('rate_limited', 'Fitbit rate limit: no calls left this hour', left.resetSeconds);
    ctx.signal.throwIfAborted();
    const answer = await ctx.http(next.request);
    left = rateLimitLeft(answer) ?? left;
    // No data for a date or range (before the account existed) is not an error.
    if (answer.status === 404 || answer.status === 204) continue;
    const ref = next.request.url ? new URL(next.request.url).pathname + new URL(next.request.url).search : refOf(next.request);
    yield { dataType: next.dataType, body: wrapAnswer(zone, answer.body, next.date), contentType: 'application/json', ref };
    if (next.dataType === 'activity_logs') {
      const more = nextLogPage(answer, ctx.window.end.getTime());
      if (more) queue.unshift({ dataType: 'activity_logs', request: { path: '/1/user/-/activities/list.json', url: more } });
    }
  }
}

/** The next page of the activity log list: `pagination.next`, while the page was full and still inside the window. */
function nextLogPage(answer: ProviderAnswer, endMs: number): string | null {
  const body = answer.json<{ activities?: unknown; pagination?: unknown }>();
  const next = isObject(body.pagination) && typeof body.pagination.next === 'string' && body.pagination.next ? body.pagination.next : null;
  const logs = Array.isArray(body.activities) ? body.activities : [];
  if (!next || logs.length === 0) return null;
  const last = logs[logs.length - 1];
  const lastStart = isObject(last) && typeof last.startTime === 'string' ? Date.parse(last.startTime) : Number.NaN;
  return Number.isFinite(lastStart) && lastStart >= endMs ? null : next;
}

export const fitbitConnector: PullConnector = {
  descriptor: fitbit,
  origins: { data: 'https://api.fitbit.com' },
  pull,
  parser: fitbitParser,
};
