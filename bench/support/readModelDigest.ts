import { createHash } from 'node:crypto';
import { projections } from '../../projections/index.js';
import type { ReadStore } from '../../src/readstore/readStore.js';

/**
 * SHA-256 over every document of every projection's collections, in `_id` order, and each
 * projection's checkpoint: two read stores with the same digest hold the same read models. The
 * `rebuild` and `ingest` benchmarks compare the live state with the rebuilt one by it, and name
 * the collections that differ by their own digests (`collections`).
 */
export async function readModelDigest(readStore: ReadStore): Promise<{ hash: string; docs: number; collections: Record<string, string> }> {
  const h = createHash('sha256');
  let docs = 0;
  const collections: Record<string, string> = {};
  for (const p of projections) {
    for (const c of p.collections) {
      const ch = createHash('sha256');
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
