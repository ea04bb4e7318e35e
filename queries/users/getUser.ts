import type { ReadStore } from '../../src/readstore/readStore.js';
import type { UserDoc } from '../../projections/users/usersProjection.js';

/**
 * A user as its tenant sees it. Another tenant's user is null, exactly like a missing one;
 * `includeDeleting` is for the routes that still act on a user being deleted.
 */
export async function getUser(readStore: ReadStore, tenantId: string, userId: string, options: { includeDeleting?: boolean } = {}) {
  const user = await readStore.get<UserDoc>('users', userId);
  if (!user || user.tenant_id !== tenantId) return null;
  if (user.status === 'deleting' && !options.includeDeleting) return null;
  return user;
}
