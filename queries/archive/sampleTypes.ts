import type { Filter, ReadStore } from '../../src/readstore/readStore.js';

/**
 * The quantity types a user has samples of, in order, one index seek per type (a skip scan over
 * the samples' (user_id, type, …) index): no type list is held whatever the number of samples.
 */
export async function* userSampleTypes(readStore: ReadStore, userId: string): AsyncGenerator<string> {
  let last: string | null = null;
  for (;;) {
    const filter: Filter = last === null ? { user_id: userId } : { user_id: userId, type: { $gt: last } };
    const [next]: { _id: string; type: string }[] = await readStore.find<{ _id: string; type: string }>('samples', { filter, sort: [['type', 1]], limit: 1 });
    if (!next) return;
    last = next.type;
    yield next.type;
  }
}
