import type { ReadStore } from '../../src/readstore/readStore.js';
import { TAGS, type TagDoc } from '../../projections/tags/tagsProjection.js';

/** One tag of the user (null for another user's). */
export async function getTag(readStore: ReadStore, userId: string, tagId: string): Promise<TagDoc | null> {
  const tag = await readStore.get<TagDoc>(TAGS, tagId);
  return tag && tag.user_id === userId ? tag : null;
}
