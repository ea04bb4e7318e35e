import type { ReadStore } from '../../src/readstore/readStore.js';
import type { UserDoc } from '../../projections/users/usersProjection.js';
import { getUser } from './getUser.js';

/** The answer of GET and PUT /v1/users/{id}/source-priorities (contracts §6). */
export type SourcePrioritiesView = { priorities: Record<string, string[]>; updated_at: string | null };

/** The user's order as the routes answer it: `{}` and null before any PUT. */
export function sourcePrioritiesOf(user: UserDoc): SourcePrioritiesView {
  return { priorities: user.source_priorities ?? {}, updated_at: user.source_priorities_updated_at ?? null };
}

/** A user's order of sources; null for another tenant's, a missing or a deleting user. */
export async function getSourcePriorities(readStore: ReadStore, tenantId: string, userId: string): Promise<SourcePrioritiesView | null> {
  const user = await getUser(readStore, tenantId, userId);
  return user ? sourcePrioritiesOf(user) : null;
}
