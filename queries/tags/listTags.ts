import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import type { TagKind } from '../../commands/tags/tag.js';
import { TAGS, type TagDoc } from '../../projections/tags/tagsProjection.js';
import type { Window } from '../records/window.js';
import { findPage, type PageRequest } from '../shared/page.js';

/**
 * A user's tags overlapping the window (spec "Time tags"): begun before its end and not ended by
 * its start; an ongoing tag has not ended. Ordered by start, oldest first.
 */
export function listTags(readStore: ReadStore, q: { userId: string; kind?: TagKind; window: Window }, page: PageRequest) {
  const filter: Filter = { user_id: q.userId };
  if (q.kind) filter.kind = q.kind;
  if (q.window.end !== null) filter.start = { $lt: new Date(q.window.end).toISOString() };
  if (q.window.start !== null) filter.end_key = { $gt: new Date(q.window.start).toISOString() };
  return findPage<TagDoc>(readStore, TAGS, { filter, sort: [['start', 1]] }, page);
}
