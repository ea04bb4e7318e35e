import type { PullConnector, PullContext, PulledPayload } from '../../shared/pullConnector.js';
import { pulls } from '../../shared/pullSelection.js';
import { stringOrNull, tokenPages } from '../../shared/tokenPaging.js';
import { DAY_MS, utcDate } from '../../shared/providerTimes.js';
import { ouraParser } from './parser.js';
import { oura } from './provider.js';
import { readOuraUserId } from './userId.js';

/**
 * What a window needs from Oura API v2. Daily documents and sleep periods are asked by local
 * date (`start_date`/`end_date`); Oura's reading of those bounds differs between collections
 * (some treat the start as exclusive, some the end as midnight), so the dates asked reach one
 * day beyond the window on each side: re-pulled documents keep their names and update in
 * place. Heart rate is asked by instant (`start_datetime`/`end_datetime`), at most 30 days per
 * request as Oura allows. Every collection pages with `next_token`.
 */
const BY_DATE: Readonly<Record<string, { path: string; scope: string | readonly string[] }>> = {
  daily_activity: { path: '/v2/usercollection/daily_activity', scope: 'daily' },
  daily_sleep: { path: '/v2/usercollection/daily_sleep', scope: 'daily' },
  daily_readiness: { path: '/v2/usercollection/daily_readiness', scope: 'daily' },
  sleep: { path: '/v2/usercollection/sleep', scope: 'daily' },
  workout: { path: '/v2/usercollection/workout', scope: 'workout' },
  // Oura's documentation names the scope spo2Daily; grants made under either name are read.
  daily_spo2: { path: '/v2/usercollection/daily_spo2', scope: ['spo2', 'spo2Daily'] },
};
const HEARTRATE = { path: '/v2/usercollection/heartrate', scope: 'heartrate' };
const PERSONAL_INFO = { path: '/v2/usercollection/personal_info', scope: 'personal' };

export const HEARTRATE_MAX_SPAN_MS = 30 * DAY_MS;

const paging = { tokenParam: 'next_token', nextToken: (b: Record<string, unknown>) => stringOrNull(b.next_token) };

async function* pullOura(ctx: PullContext): AsyncIterable<PulledPayload> {
  const { start, end } = ctx.window;
  if (end.getTime() <= start.getTime()) return;
  const dates = { start_date: utcDate(start.getTime(), -1), end_date: utcDate(end.getTime() - 1, 1) };
  for (const [dataType, c] of Object.entries(BY_DATE)) {
    if (!pulls(ctx, dataType, c.scope)) continue;
    yield* tokenPages(ctx, dataType, { path: c.path, query: dates }, paging);
  }
  if (pulls(ctx, 'heartrate', HEARTRATE.scope)) {
    for (let from = start.getTime(); from < end.getTime(); from += HEARTRATE_MAX_SPAN_MS) {
      const to = Math.min(from + HEARTRATE_MAX_SPAN_MS, end.getTime());
      const query = { start_datetime: new Date(from).toISOString(), end_datetime: new Date(to).toISOString() };
      yield* tokenPages(ctx, 'heartrate', { path: HEARTRATE.path, query }, paging);
    }
  }
  if (pulls(ctx, 'personal_info', PERSONAL_INFO.scope)) {
    yield* tokenPages(ctx, 'personal_info', { path: PERSONAL_INFO.path }, { ...paging, nextToken: () => null });
  }
}

export const ouraConnector: PullConnector = {
  descriptor: oura,
  readUserId: readOuraUserId,
  origins: { data: 'https://api.ouraring.com' },
  pull: pullOura,
  parser: ouraParser,
};
