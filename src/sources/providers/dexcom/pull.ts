import type { PullConnector, PullContext, PulledPayload } from '../../shared/pullConnector.js';
import { wantedType } from '../../shared/pullSelection.js';
import { DAY_MS } from '../../shared/providerTimes.js';
import { requestRef } from '../../shared/tokenPaging.js';
import { dexcomQueryTime, readSystemTime } from './dexcomTimes.js';
import { dexcomParser } from './parser.js';
import { DEXCOM_ORIGIN, dexcom } from './provider.js';

/**
 * What a window needs from Dexcom API v3 (docs/connectors/dexcom.md). `dataRange` first: it
 * names, per record type, the first and last record the user has, so each type is asked only
 * where it has data (a backfill of a user who started last week asks for last week). egvs,
 * calibrations and events take `startDate`/`endDate` (UTC, no offset) spanning at most 30 days
 * each, as Dexcom allows; nothing pages. devices is one list. Every answer is stored as sent.
 */
export const DEXCOM_MAX_SPAN_MS = 30 * DAY_MS;
const WINDOWED = ['egvs', 'calibrations', 'events'] as const;
const PATH = (type: string) => `/v3/users/self/${type}`;

type Bounds = { start: number; end: number };

/** The span dataRange gives a record type; null when the user has none of it (or the answer does not say). */
function boundsOf(range: unknown, type: string): Bounds | null {
  if (!range || typeof range !== 'object') return null;
  const r = (range as Record<string, unknown>)[type];
  if (!r || typeof r !== 'object') return null;
  const { start, end } = r as { start?: { systemTime?: unknown }; end?: { systemTime?: unknown } };
  try {
    const s = readSystemTime(start?.systemTime, `${type}.start`).ms;
    const e = readSystemTime(end?.systemTime, `${type}.end`).ms;
    return s <= e ? { start: s, end: e } : null;
  } catch {
    return null;
  }
}

async function* pullDexcom(ctx: PullContext): AsyncIterable<PulledPayload> {
  const { start, end } = ctx.window;
  if (end.getTime() <= start.getTime()) return;
  const rangeAnswer = await ctx.http({ path: PATH('dataRange') });
  if (rangeAnswer.status === 404) return;
  yield { dataType: 'dataRange', body: rangeAnswer.body, contentType: rangeAnswer.headers.get('content-type') ?? 'application/json', ref: `${PATH('dataRange')}@${end.toISOString()}` };
  let range: unknown = null;
  try {
    range = rangeAnswer.json();
  } catch {
    range = null; // Stored as sent; without bounds nothing else is asked.
  }
  for (const type of WINDOWED) {
    if (!wantedType(ctx, type)) continue;
    const bounds = boundsOf(range, type);
    if (!bounds) continue;
    // The last record's own second is included: the range ends one second after it.
    const from = Math.max(start.getTime(), Math.floor(bounds.start / 1000) * 1000);
    const to = Math.min(end.getTime(), Math.floor(bounds.end / 1000) * 1000 + 1000);
    for (let a = from; a < to; a += DEXCOM_MAX_SPAN_MS) {
      ctx.signal.throwIfAborted();
      const query = { startDate: dexcomQueryTime(a), endDate: dexcomQueryTime(Math.min(a + DEXCOM_MAX_SPAN_MS, to)) };
      if (query.startDate === query.endDate) continue;
      const answer = await ctx.http({ path: PATH(type), query });
      if (answer.status === 404) break;
      yield { dataType: type, body: answer.body, contentType: answer.headers.get('content-type') ?? 'application/json', ref: requestRef(PATH(type), query) };
    }
  }
  if (wantedType(ctx, 'devices')) {
    const answer = await ctx.http({ path: PATH('devices') });
    if (answer.status !== 404) yield { dataType: 'devices', body: answer.body, contentType: answer.headers.get('content-type') ?? 'application/json', ref: PATH('devices') };
  }
}

export const dexcomConnector: PullConnector = {
  descriptor: dexcom,
  origins: { data: DEXCOM_ORIGIN },
  pull: pullDexcom,
  parser: dexcomParser,
};
