import type { PullConnector, PullContext, PulledPayload } from '../../shared/pullConnector.js';
import { pulls } from '../../shared/pullSelection.js';
import { stringOrNull, tokenPages } from '../../shared/tokenPaging.js';
import { GOOGLE_DATA_TYPES, windowFilter } from './dataTypes.js';
import { googleParser } from './parser.js';
import { readGoogleUserId } from './userId.js';
import { GOOGLE_HEALTH_ORIGIN, google } from './provider.js';

/**
 * What a window needs from the Google Health API v4 (docs/connectors/google.md): for each data
 * type the grant's scopes open, `users/me/dataTypes/{type}/dataPoints` filtered to the window and
 * paged by `pageToken` (at most PAGE_SIZE points a page). These are the per-source data points,
 * each naming its device; the reconciled stream (`:reconcile`) is not pulled, so the service's
 * own merged view decides between devices by the tenant's source order.
 */
export const GOOGLE_PAGE_SIZE = '1000';
const paging = { tokenParam: 'pageToken', nextToken: (b: Record<string, unknown>) => stringOrNull(b.nextPageToken) };

async function* pullGoogle(ctx: PullContext): AsyncIterable<PulledPayload> {
  const { start, end } = ctx.window;
  if (end.getTime() <= start.getTime()) return;
  for (const d of GOOGLE_DATA_TYPES) {
    if (!pulls(ctx, d.id, d.scope)) continue;
    yield* tokenPages(ctx, d.id, { path: `/v4/users/me/dataTypes/${d.id}/dataPoints`, query: { filter: windowFilter(d, start, end), pageSize: GOOGLE_PAGE_SIZE } }, paging);
  }
}

export const googleConnector: PullConnector = {
  descriptor: google,
  readUserId: readGoogleUserId,
  origins: { data: GOOGLE_HEALTH_ORIGIN },
  pull: pullGoogle,
  parser: googleParser,
};
