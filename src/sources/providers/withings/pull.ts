import type { ProviderRequest, PullConnector, PullContext, PulledPayload } from '../../shared/pullConnector.js';
import { requestRef } from '../../shared/tokenPaging.js';
import { isObject } from '../../shared/connectorRecords.js';
import { MEASTYPES_PARAM, REAL_MEASUREMENT } from './measureTypes.js';
import { withingsParser } from './parser.js';
import { withings } from './provider.js';
import { withingsBody } from './withingsAnswer.js';

/**
 * Withings pulls (docs/connectors/withings.md): every call is a POST with a form naming the
 * `action`, answered `{status, body}`; lists page with `more` and `offset`. Measures take the
 * window as Unix seconds; activity, sleep summaries and workouts take local dates, so the window
 * is widened by the 14 hours any zone can be ahead of or behind UTC and the decoder keeps each
 * record's own time. Each sleep summary night is followed by its stages (`get`, one night each).
 */
const ZONE_MARGIN_MS = 14 * 3_600_000;

/** Which scope each data type needs (a grant without it is skipped, not refused). */
const SCOPE_OF: Readonly<Record<string, string>> = { measure: 'user.metrics', activity: 'user.activity', sleep: 'user.activity', workouts: 'user.activity' };

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function* pages(ctx: PullContext, dataType: string, request: ProviderRequest): AsyncGenerator<{ payload: PulledPayload; body: Record<string, unknown> }> {
  let offset: string | null = null;
  const seen = new Set<string>();
  for (;;) {
    ctx.signal.throwIfAborted();
    const form: Record<string, string> = { ...request.form, ...(offset ? { offset } : {}) };
    const answer = await ctx.http({ ...request, method: 'POST', form });
    const what = `${request.path} ${form.action}`;
    if (answer.status === 404) return;
    let json: unknown;
    try {
      json = answer.json();
    } catch {
      json = null;
    }
    // An error status is thrown before anything is stored: a refusal is not data.
    const body = withingsBody(json, what);
    yield { payload: { dataType, body: answer.body, contentType: answer.headers.get('content-type') ?? 'application/json', ref: requestRef(request.path, form) }, body };
    const more = body.more === true || body.more === 1;
    const next = body.offset;
    if (!more || (typeof next !== 'number' && typeof next !== 'string')) return;
    offset = String(next);
    if (seen.has(offset)) return;
    seen.add(offset);
  }
}

function granted(ctx: PullContext, dataType: string): boolean {
  if (ctx.dataType !== null && ctx.dataType !== dataType) return false;
  const scopes = ctx.scopes.flatMap((s) => s.split(/[ ,]+/)).filter(Boolean);
  // A grant whose scopes the provider did not report is taken as the full grant asked for.
  return scopes.length === 0 || scopes.includes(SCOPE_OF[dataType]!);
}

async function* pull(ctx: PullContext): AsyncIterable<PulledPayload> {
  const start = ctx.window.start.getTime();
  const end = ctx.window.end.getTime();
  const dates = { startdateymd: day(start - ZONE_MARGIN_MS), enddateymd: day(end - 1 + ZONE_MARGIN_MS) };
  if (granted(ctx, 'measure')) {
    const form = { action: 'getmeas', meastypes: MEASTYPES_PARAM, category: String(REAL_MEASUREMENT), startdate: String(Math.floor(start / 1000)), enddate: String(Math.ceil(end / 1000) - 1) };
    for await (const p of pages(ctx, 'measure', { path: '/measure', form })) yield p.payload;
  }
  if (granted(ctx, 'activity')) {
    for await (const p of pages(ctx, 'activity', { path: '/v2/measure', form: { action: 'getactivity', ...dates } })) yield p.payload;
  }
  if (granted(ctx, 'sleep')) {
    const form = { action: 'getsummary', ...dates, data_fields: SUMMARY_FIELDS };
    for await (const p of pages(ctx, 'sleep', { path: '/v2/sleep', form })) {
      yield p.payload;
      for (const night of Array.isArray(p.body.series) ? p.body.series : []) {
        if (!isObject(night) || typeof night.startdate !== 'number' || typeof night.enddate !== 'number' || night.enddate <= night.startdate) continue;
        // `get` answers at most 24 hours at once; a night is shorter.
        const to = Math.min(night.enddate, night.startdate + 86_400);
        for await (const s of pages(ctx, 'sleep', { path: '/v2/sleep', form: { action: 'get', startdate: String(night.startdate), enddate: String(to), data_fields: 'hr,rr' } })) yield s.payload;
      }
    }
  }
  if (granted(ctx, 'workouts')) {
    for await (const p of pages(ctx, 'workouts', { path: '/v2/measure', form: { action: 'getworkouts', ...dates } })) yield p.payload;
  }
}

/** The sleep summary fields asked for: durations, heart and breathing rates, score. */
const SUMMARY_FIELDS = [
  'total_sleep_time',
  'total_timeinbed',
  'lightsleepduration',
  'deepsleepduration',
  'remsleepduration',
  'wakeupduration',
  'wakeupcount',
  'durationtosleep',
  'durationtowakeup',
  'sleep_efficiency',
  'sleep_score',
  'hr_average',
  'hr_min',
  'hr_max',
  'rr_average',
  'rr_min',
  'rr_max',
  'snoring',
  'breathing_disturbances_intensity',
].join(',');

export const withingsConnector: PullConnector = {
  descriptor: withings,
  origins: { data: 'https://wbsapi.withings.net' },
  pull,
  parser: withingsParser,
};
