import { join } from 'node:path';
import type { QuantityRecord } from '../../../../commands/ingestion/records.js';
import { SAMPLE_BLOCKS, SAMPLE_KEYS } from '../../../../projections/records/sampleBlocks/sampleBlock.js';
import { samplesProjection } from '../../../../projections/records/samplesProjection.js';
import { SAMPLE_ROLLUPS } from '../../../../projections/records/sampleRollups/dayRollup.js';
import type { Doc, ReadStore } from '../../../../src/readstore/readStore.js';
import { SAMPLE_KEY_RUNS, storedLocators } from '../../../../projections/records/sampleBlocks/recentLocators.js';
import { SqliteReadStore } from '../../../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../../../support/tmp.js';
import { drawnQuantity } from '../harness.js';

/** What the block tests that run batches against a real embedded store share: a day, heart rates of one stream, a store, its state. */
export const BASE = Date.parse('2026-03-27T00:00:00Z');
export const MIN = 60_000;
const stream = { provider: 'device-a', source: 'apple', body_worn: true, device: 'Apple Watch (Watch7,1)', metadata: {}, source_name: null } as const;

/** A one-minute heart rate of the one stream, with record key `key`. */
export const hr = (key: string, start: number, value: number): QuantityRecord => drawnQuantity({ key, type: 'heart_rate', value, start, minutes: 1 }, stream);

let stores = 0;
/** A fresh embedded read store with the samples projection's collections, in a directory named by `prefix`. */
export async function samplesStore(prefix: string): Promise<ReadStore> {
  const store = new SqliteReadStore({ path: join(tempDir(prefix), `read-${++stores}.db`) });
  await store.ensureCollections(samplesProjection.collections);
  return store;
}

const all = (store: ReadStore, collection: string) => store.find(collection, { sort: [['_id', 1]] });
/** Every locator, main's and the recent tier's as one set (storedLocators), in `_id` order. */
export const locators = async (store: ReadStore) => {
  const out: Doc[] = [];
  for await (const k of storedLocators(store)) out.push(k);
  return out;
};
/**
 * A collection of the samples projection as live and rebuilt stores must agree on it: the
 * locators as one set (main's and the recent tier's; how they split depends on where the live
 * merges fell, and a rebuild writes main only), so the runs themselves are not compared.
 */
export const logicalState = async (store: ReadStore, collection: string) =>
  collection === SAMPLE_KEYS ? await locators(store) : collection === SAMPLE_KEY_RUNS ? [] : await all(store, collection);
/** Every block, locator (both tiers as one set) and rollup stored, in `_id` order. */
export const blockState = async (store: ReadStore) =>
  Object.fromEntries(await Promise.all([SAMPLE_BLOCKS, SAMPLE_KEYS, SAMPLE_ROLLUPS].map(async (c) => [c, c === SAMPLE_KEYS ? await locators(store) : await all(store, c)] as const)));
