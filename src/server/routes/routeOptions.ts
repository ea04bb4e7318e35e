import type { AppContext } from '../appContext.js';
import type { CursorCodec } from '../../shared/cursor.js';

/**
 * Options every route plugin gets. A plugin registered with `admin: true` under
 * `/v1/admin/tenants/:tenant_id` serves the admin's copy of its routes (spec "Instance admin
 * routes"): same handlers, admin key, tenant from the path, Location on mutations.
 */
export type RouteOptions = { ctx: AppContext; cursors: CursorCodec; admin?: boolean };

export const ADMIN_PREFIX = '/v1/admin/tenants/:tenant_id';

export function adminLocation(tenantId: string, path: string): string {
  return `/v1/admin/tenants/${tenantId}${path}`;
}
