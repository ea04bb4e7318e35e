import type { PullConnector, PullContext, PulledPayload } from '../../shared/pullConnector.js';
import { pulls } from '../../shared/pullSelection.js';
import { stringOrNull, tokenPages } from '../../shared/tokenPaging.js';
import { whoopParser } from './parser.js';
import { whoop } from './provider.js';
import { readWhoopUserId } from './userId.js';

/**
 * What a window needs from the WHOOP developer API v2. Collections take the window as instants
 * (`start` inclusive, `end` exclusive, matched against each document's own span, so a cycle or
 * sleep crossing the window's edge comes too), at most 25 documents a page (`limit`), newest
 * first; the answer's `next_token` goes back as `nextToken`. The body measurement is one
 * document, asked once per run.
 */
export const WHOOP_PAGE_LIMIT = 25;

const COLLECTIONS: Readonly<Record<string, { path: string; scope: string }>> = {
  cycle: { path: '/developer/v2/cycle', scope: 'read:cycles' },
  recovery: { path: '/developer/v2/recovery', scope: 'read:recovery' },
  sleep: { path: '/developer/v2/activity/sleep', scope: 'read:sleep' },
  workout: { path: '/developer/v2/activity/workout', scope: 'read:workout' },
};
const BODY = { path: '/developer/v2/user/measurement/body', scope: 'read:body_measurement' };

const paging = { tokenParam: 'nextToken', nextToken: (b: Record<string, unknown>) => stringOrNull(b.next_token) };

async function* pullWhoop(ctx: PullContext): AsyncIterable<PulledPayload> {
  const { start, end } = ctx.window;
  if (end.getTime() <= start.getTime()) return;
  const query = { start: start.toISOString(), end: end.toISOString(), limit: String(WHOOP_PAGE_LIMIT) };
  for (const [dataType, c] of Object.entries(COLLECTIONS)) {
    if (!pulls(ctx, dataType, c.scope)) continue;
    yield* tokenPages(ctx, dataType, { path: c.path, query }, paging);
  }
  if (pulls(ctx, 'body_measurement', BODY.scope)) {
    yield* tokenPages(ctx, 'body_measurement', { path: BODY.path }, { ...paging, nextToken: () => null });
  }
}

export const whoopConnector: PullConnector = {
  descriptor: whoop,
  readUserId: readWhoopUserId,
  origins: { data: 'https://api.prod.whoop.com' },
  pull: pullWhoop,
  parser: whoopParser,
};
