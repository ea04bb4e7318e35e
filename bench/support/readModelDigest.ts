import { createHash } from 'node:crypto';
import { projections } from '../../projections/index.js';
import { SAMPLE_KEY_RUNS, storedLocators } from '../../projections/records/sampleBlocks/recentLocators.js';
import { SAMPLE_KEYS } from '../../projections/records/sampleBlocks/sampleBlock.js';
import type { ReadStore } from '../../src/readstore/readStore.js';

/**
 * SHA-256 over every document of every projection's collections, in `_id` order, and each
 * projection's checkpoint: two read stores with the same digest hold the same read models. The
 * `rebuild` and `ingest` benchmarks compare the live state with the rebuilt one by it, and name
 * the collections that differ by their own digests (`collections`). The samples' locators are
 * digested as one set, main's and the recent tier's together (storedLocators), under
 * `sample_keys`: how the two split them depends on where the live projection's merges fell,
 * and a rebuild writes them all to main.
 */
export async function readModelDigest(readStore: ReadStore): Promise<{ hash: string; docs: number; collections: Record<string, string> }> {
  const h = createHash('sha256');
  let docs = 0;
  const collections: Record<string, string> = {};
  for (const p of projections) {
    for (const c of p.collections) {
      const ch = createHash('sha256');
      if (c.name === SAMPLE_KEY_RUNS) continue;
      if (c.name === SAMPLE_KEYS) {
        for await (const d of storedLocators(readStore)) {
          const json = JSON.stringify(d);
          h.update(json);
          ch.update(json);
          docs++;
        }
        collections[c.name] = ch.digest('hex');
        continue;
      }
      let after: (string | number | boolean | null)[] | undefined;
      for (;;) {
        const page = await readStore.find(c.name, { sort: [['_id', 1]], limit: 5000, after });
        if (page.length === 0) break;
        for (const d of page) {
          const json = JSON.stringify(d);
          h.update(json);
          ch.update(json);
        }
        docs += page.length;
        after = [page[page.length - 1]!._id];
      }
      collections[c.name] = ch.digest('hex');
    }
    const cp = await readStore.getCheckpoint(p.name);
    h.update(`${p.name}:${cp?.position ?? 0}`);
  }
  return { hash: h.digest('hex'), docs, collections };
}
