import type { ReadStore } from '../../src/readstore/readStore.js';
import type { UserDoc } from '../../projections/users/usersProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';

/** The tenant's users, oldest first. Users being deleted are no longer listed (their reads are 404 too). */
export function listUsers(readStore: ReadStore, tenantId: string, page: PageRequest) {
  return findPage<UserDoc>(readStore, 'users', { filter: { tenant_id: tenantId, status: 'active' }, sort: [['created_at', 1]] }, page);
}
