import type { SampleDoc } from '../../projections/records/samplesProjection.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { sampleById } from './sampleBlocks.js';

/** A user's quantity sample by its integer id, with its merged-view flag; null when the user has none such. */
export async function getSample(readStore: ReadStore, userId: string, id: number): Promise<(SampleDoc & { primary: boolean }) | null> {
  const doc = await sampleById(readStore, userId, id);
  return doc ? Object.assign(doc, { primary: doc.hidden !== true }) : null;
}
