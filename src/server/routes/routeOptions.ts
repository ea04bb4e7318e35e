import type { AppContext } from '../appContext.js';
import type { CursorCodec } from '../../shared/cursor.js';

/**
 * Options every route plugin gets. The admin's copies of tenant routes (spec "Instance admin
 * routes") are made by one wrapper, src/server/adminMirror.ts: handlers never ask which copy runs.
 */
export type RouteOptions = { ctx: AppContext; cursors: CursorCodec };

/** Where the instance admin acts on one tenant. */
export const ADMIN_PREFIX = '/v1/admin/tenants/:tenant_id';

/** An admin route of the tenant: `path` under its prefix. */
export function adminLocation(tenantId: string, path: string): string {
  return `/v1/admin/tenants/${tenantId}${path}`;
}
