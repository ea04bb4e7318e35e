import { z } from 'zod';
import { getUser } from '../../../queries/users/getUser.js';
import type { AppContext } from '../appContext.js';
import { UUID_RE } from '../../shared/ids.js';
import { parseTimeWindow } from '../../shared/timeWindow.js';
import { problems } from '../problems.js';
import { Cursor, Limit, TimeParam } from '../schemas.js';

/** Query pieces shared by the record reads (spec "Reads"). */
export const WindowQuery = {
  start: TimeParam('Inclusive: RFC 3339 time or YYYY-MM-DD (midnight UTC)').optional(),
  end: TimeParam('Exclusive: RFC 3339 time or YYYY-MM-DD (midnight UTC)').optional(),
};
export const ViewQuery = { view: z.enum(['merged', 'all']).default('merged').describe('merged (default): only the best ranked source; all: every source') };
export const PagingQuery = { cursor: Cursor.optional(), limit: Limit };

export const UserParams = z.object({ id: z.string().describe('User id (uuid)') });

/**
 * The user whose records are read: another tenant's, a missing or a deleting user is a 404 (spec
 * "Reads" rule 6). (The merged view needs nothing more: the record projections keep it under the
 * user's order.)
 */
export async function readableUser(ctx: AppContext, tenantId: string, id: string) {
  const user = UUID_RE.test(id) ? await getUser(ctx.readStore, tenantId, id.toLowerCase()) : null;
  if (!user) throw problems.notFound('user not found');
  return user;
}

export function windowOf(query: { start?: string; end?: string }) {
  return parseTimeWindow(query.start, query.end);
}

/** A cursor is bound to its list: the route, the user and every filter. */
export function cursorScope(route: string, userId: string, filters: Record<string, unknown>): string {
  return `${route}:${userId}:${JSON.stringify(filters)}`;
}
