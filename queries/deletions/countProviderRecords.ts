import type { ReadStore } from '../../src/readstore/readStore.js';
import { countProviderSamples } from '../records/sampleBlocks.js';

/**
 * The collections holding one row per normalised record (rows hung below a record, such as sleep
 * phases, route points, RR intervals and ECG voltages, are parts of it and not counted). Quantity
 * samples, stored in blocks, are counted by countProviderSamples.
 */
export const RECORD_COLLECTIONS = [
  'category_samples',
  'sleep_sessions',
  'workouts',
  'nutrition',
  'daily_summaries',
  'ecg_recordings',
  'heartbeat_series',
  'menstrual_cycles',
  'observations',
] as const;

/** Records of one user from one provider in the read models (data.erased's records_deleted). */
export async function countProviderRecords(readStore: ReadStore, userId: string, provider: string): Promise<number> {
  let n = await countProviderSamples(readStore, userId, provider);
  for (const c of RECORD_COLLECTIONS) n += await readStore.count(c, { user_id: userId, provider });
  return n;
}
