import type { Change } from '../../../src/readstore/readStore.js';

/**
 * The batch's changes of `collection` (a kind's record upserts) per user (`set.user_id`), each
 * user's in log order. A folded collection's changes are taken out of `evolved` (never stored:
 * the session writes what they mean); any other's stay in it, and the lists share their objects
 * (rowSession sets a batch record's flag in its own upsert).
 */
export function recordsByUser(evolved: Change[], collection: string, folded: boolean): Change[][] {
  const byUser = new Map<string, Change[]>();
  let kept = 0;
  for (const c of evolved) {
    if (c.collection !== collection) {
      evolved[kept++] = c;
      continue;
    }
    if (!folded) evolved[kept++] = c;
    const userId = c.op === 'update' ? (c.set?.user_id as string | undefined) : undefined;
    // A folded change that is no upsert with fields is dropped, as the session's stage dropped it.
    if (userId === undefined) continue;
    const list = byUser.get(userId);
    if (list) list.push(c);
    else byUser.set(userId, [c]);
  }
  evolved.length = kept;
  return [...byUser.values()];
}
