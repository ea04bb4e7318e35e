import { ProviderCallError } from '../../shared/oauthClient.js';
import type { ProviderAnswer, PullConnector, PullContext, PulledPayload } from '../../shared/pullConnector.js';
import { isObject } from '../../shared/connectorRecords.js';
import { grantedScope } from '../../shared/pullSelection.js';
import { hasStreams } from './decodeActivity.js';
import { streamsPayload, stravaParser } from './parser.js';
import { strava } from './provider.js';

const PER_PAGE = 100;
const STREAM_KEYS = 'time,latlng,altitude,heartrate,velocity_smooth,distance';
const QUARTER_MS = 15 * 60_000;
const DAY_MS = 86_400_000;

/** Scopes that open an athlete's activities (`activity:read_all` adds the private ones). */
const ACTIVITY_SCOPES = ['activity:read', 'activity:read_all'];

/**
 * Strava counts calls per application in 15-minute windows (starting at :00, :15, :30, :45) and
 * per UTC day, and reports `X-ReadRateLimit-Limit`/`-Usage` ("15-minute,daily") on every answer.
 * Once a window is spent the run stops as rate limited until that window ends, rather than
 * collect 429s (whose answer says no time to wait).
 */
export function rateLimitWait(answer: ProviderAnswer, nowMs: number): number | null {
  const pair = (name: string) => {
    const v = answer.headers.get(name);
    return v ? v.split(',').map((x) => (x.trim() ? Number(x.trim()) : Number.NaN)) : [Number.NaN, Number.NaN];
  };
  const [limit15, limitDay] = answer.headers.has('x-readratelimit-limit') ? pair('x-readratelimit-limit') : pair('x-ratelimit-limit');
  const [used15, usedDay] = answer.headers.has('x-readratelimit-usage') ? pair('x-readratelimit-usage') : pair('x-ratelimit-usage');
  const date = Date.parse(answer.headers.get('date') ?? '');
  const now = Number.isFinite(date) ? date : nowMs;
  if (Number.isFinite(limitDay) && Number.isFinite(usedDay) && usedDay! >= limitDay!) return Math.ceil((Math.floor(now / DAY_MS + 1) * DAY_MS - now) / 1000);
  if (Number.isFinite(limit15) && Number.isFinite(used15) && used15! >= limit15!) return Math.max(1, Math.ceil((Math.floor(now / QUARTER_MS + 1) * QUARTER_MS - now) / 1000));
  return null;
}

async function* pull(ctx: PullContext): AsyncIterable<PulledPayload> {
  if (!grantedScope(ctx, ACTIVITY_SCOPES)) return;
  // Strava's only data are activities: whatever a notification names, the window's list and streams are pulled.
  if (ctx.window.end <= ctx.window.start) return;
  // `after` and `before` compare whole seconds with the activity's start, both exclusive.
  const after = String(Math.floor(ctx.window.start.getTime() / 1000) - 1);
  const before = String(Math.ceil(ctx.window.end.getTime() / 1000));
  let wait: number | null = null;
  const call = async (request: Parameters<PullContext['http']>[0]) => {
    if (wait !== null) throw new ProviderCallError('rate_limited', 'Strava rate limit: this window’s calls are spent', wait);
    ctx.signal.throwIfAborted();
    const answer = await ctx.http(request);
    wait = rateLimitWait(answer, Date.now());
    return answer;
  };
  for (let page = 1; ; page++) {
    const query = { after, before, page: String(page), per_page: String(PER_PAGE) };
    const answer = await call({ path: '/api/v3/athlete/activities', query });
    if (answer.status !== 200) return;
    const activities = answer.json<unknown>();
    yield { dataType: 'activities', body: answer.body, contentType: 'application/json', ref: `/api/v3/athlete/activities?${new URLSearchParams(query).toString()}` };
    if (!Array.isArray(activities)) return;
    for (const a of activities) {
      if (!isObject(a) || !hasStreams(a) || (typeof a.id !== 'number' && typeof a.id !== 'string')) continue;
      const path = `/api/v3/activities/${a.id}/streams`;
      const streams = await call({ path, query: { keys: STREAM_KEYS, key_by_type: 'true' } });
      // An activity made private or deleted since the list answers 404: its workout comes without streams.
      yield { dataType: 'streams', body: streamsPayload(a, streams.status === 200 ? streams.body : null), contentType: 'application/json', ref: path };
    }
    if (activities.length < PER_PAGE) return;
  }
}

export const stravaConnector: PullConnector = {
  descriptor: strava,
  origins: { data: 'https://www.strava.com' },
  pull,
  parser: stravaParser,
};
