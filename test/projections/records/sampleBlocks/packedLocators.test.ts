import { describe, expect, it } from 'vitest';
import { familyIn, idsInMain, isKeyRow, KEY_ROW, type KeyRowDoc, mergeIntoKeyRows, setFamily, sliceOf } from '../../../../projections/records/sampleBlocks/packedLocators.js';
import { recordKey } from '../../../../projections/records/recordIds.js';
import { locatorId, SAMPLE_KEYS, userLocators } from '../../../../projections/records/sampleBlocks/sampleBlock.js';
import type { Change } from '../../../../src/readstore/readStore.js';
import { samplesStore } from './blockStoreHarness.js';

/**
 * The packed locators (packedLocators.ts, docs/sample-blocks.md "Layout"): key rows hold every key
 * merged into them, found again whatever rows they fell into, and never more than KEY_ROW a row;
 * id rows give each id its family, whatever order the ids were set in.
 */
const locatorsOf = (user: string, provider: string, from: number, to: number) => {
  const out: { key: string; id: number }[] = [];
  for (let i = from; i < to; i++) out.push({ key: locatorId(user, recordKey(user, provider, `ext-${i}`)), id: 10_000 * (i + 1) + (i % 10_000) });
  return out.sort((a, b) => (a.key < b.key ? -1 : 1));
};

describe("the samples' locators packed (issue 38, h19/locators)", () => {
  it('key rows merged in slices, in several passes, find every key with its id, hold at most KEY_ROW each, and nothing of another provider', async () => {
    const store = await samplesStore('wellstream-packed-locators-');
    const slices = 4;
    const user = 'user-1';
    const tag = locatorId(user, 'x').slice(0, 12);
    const all: { key: string; id: number }[] = [];
    // Three merges of random keys (the later ones between the earlier ones' keys), each slice by slice.
    for (const [from, to] of [[0, 1500], [1500, 4000], [4000, 4100]] as const) {
      const batch = locatorsOf(user, 'device-a', from, to);
      all.push(...batch);
      for (let s = 0; s < slices; s++) {
        const written = new Map<string, KeyRowDoc | null>();
        const out: Change[] = [];
        const slice = batch.filter((e) => sliceOf(e.key, slices) === s);
        await mergeIntoKeyRows(store, tag, 'device-a', s, slices, slice, written, out);
        await store.applyChanges(out);
      }
    }
    const ofB: Change[] = [];
    await mergeIntoKeyRows(store, tag, 'device-b', 0, 1, locatorsOf(user, 'device-b', 0, 10), new Map(), ofB);
    await store.applyChanges(ofB);
    const rows = (await store.find<KeyRowDoc>(SAMPLE_KEYS, { filter: { ...userLocators(user), provider: 'device-a' } })).filter((r) => isKeyRow(r._id));
    expect(rows.reduce((n, r) => n + r.n, 0)).toBe(all.length);
    for (const r of rows) expect(r.n).toBeLessThanOrEqual(KEY_ROW);
    const found = await idsInMain(store, new Map(all.map((e) => [e.key, 'device-a'])));
    expect(found.size).toBe(all.length);
    for (const e of all) expect(found.get(e.key)).toBe(e.id);
    // Another provider's key is looked up among that provider's rows only.
    const other = locatorsOf(user, 'device-b', 0, 10);
    expect((await idsInMain(store, new Map(other.map((e) => [e.key, 'device-a'])))).size).toBe(0);
    expect((await idsInMain(store, new Map(other.map((e) => [e.key, 'device-b'])))).size).toBe(10);
    await store.close();
  });

  it("an id row gives each id the family last set, whatever order its indexes came in, and none to an id never set", () => {
    const row = { f: [] as string[], o: 0, x: [] as number[] };
    setFamily(row, 70_500, 'fam-a');
    setFamily(row, 70_002, 'fam-b');
    setFamily(row, 70_900, 'fam-a');
    setFamily(row, 70_500, 'fam-c');
    expect([familyIn(row, 70_002), familyIn(row, 70_500), familyIn(row, 70_900)]).toEqual(['fam-b', 'fam-c', 'fam-a']);
    expect([familyIn(row, 70_001), familyIn(row, 70_501), familyIn(row, 70_901)]).toEqual([null, null, null]);
  });
});
