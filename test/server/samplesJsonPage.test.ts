import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { samplesProjection, type SampleDoc } from '../../projections/records/samplesProjection.js';
import { listSamples, listSamplesJson } from '../../queries/records/listSamples.js';
import type { Doc, ReadStore } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { compiledSerializerCompiler } from '../support/compiledSerializer.js';
import { QUANTITY_SAMPLE_JSON, QuantitySample, toQuantitySample } from '../../src/server/routes/samples.js';
import { pageOf } from '../../src/server/schemas.js';
import { blockChanges } from '../support/sampleBlockStores.js';
import { tempDir } from '../support/tmp.js';

const serialize = compiledSerializerCompiler({ schema: pageOf(QuantitySample), method: 'GET', url: '/v1/users/:id/samples' });

/** Samples as the projection stores them: every optional field present or absent, odd strings, both merged-view flags. */
function sampleDocs(): Doc[] {
  const odd = ['Apple Watch', 'quote " backslash \\ newline \n tab \t', '\u0000\u001f ctrl', 'ü 🫀 \u2028', "it's"];
  return Array.from({ length: 40 }, (_, i) => {
    const t = new Date(Date.parse('2026-03-01T00:00:00Z') + Math.floor(i / 2) * 60_000).toISOString();
    const doc: Doc = {
      _id: `key-${i}`,
      id: 10_000 + i,
      type: 'heart_rate',
      // Integers and short fractions SQLite writes; one value whose shortest decimal has 16 digits, which it cannot.
      value: i === 24 ? 60.125 + i / 7 : i % 3 ? 55 + i : 60.125 + i,
      unit: 'count/min',
      start_date: t,
      end_date: t,
      source_name: i % 4 === 3 ? null : odd[i % odd.length]!,
      source_bundle_id: i % 5 === 4 ? null : 'com.apple.health',
      device_model: i % 6 === 5 ? null : 'Watch',
      product_type: i % 7 === 6 ? null : 'Watch7,1',
      external_id: `ext-${odd[(i + 1) % odd.length]}-${i}`,
      was_user_entered: i % 9 === 0,
      metadata: i % 8 === 7 ? {} : { HKTimeZone: 'Europe/Berlin', note: odd[(i + 2) % odd.length], original_value: 55.5 + i, nested: [1, null, { x: true }] },
      provider: 'device-a',
      source: i % 2 ? 'polar' : 'apple',
      device: i % 10 === 9 ? null : 'Watch (Watch7,1)',
      body_worn: true,
      user_id: 'u1',
      tenant_id: 't1',
      day: t.slice(0, 10),
      ingested_at: '2026-03-02T10:00:00.000Z',
      excluded: false,
    };
    // Rows stored before quality flags lack them; rows before the merged view lack `hidden`.
    if (i % 11 !== 10) doc.quality = i % 13 === 12 ? ['manual'] : [];
    if (i % 12 !== 11) doc.hidden = i % 2 === 1;
    return doc;
  });
}

/** The samples stored as the samples projection stores them (issue 38: in blocks), cut small so a page spans several. */
async function storeWith(docs: Doc[]): Promise<ReadStore> {
  const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
  await store.ensureCollections(samplesProjection.collections);
  await store.applyChanges(blockChanges(docs as unknown as SampleDoc[], [3, 5, 8]));
  return store;
}

describe('GET /v1/users/{id}/samples written by the route template from the samples read (issue 27 step 4; issue 38: from blocks)', () => {
  it('the template names the answer schema keys in the schema order', () => {
    const keys = Object.keys((QuantitySample as unknown as { shape: Record<string, unknown> }).shape);
    expect(QUANTITY_SAMPLE_JSON.map((f) => f.key)).toEqual(keys);
  });

  for (const view of ['all', 'merged'] as const) {
    it(`view=${view}: every page is byte for byte the compiled serializer's answer of the documents' page, cursor included (optional fields present and absent, values that need escaping)`, async () => {
      const store = await storeWith(sampleDocs());
      const q = { userId: 'u1', type: 'heart_rate', window: { start: null, end: null }, view };
      let after: readonly (string | number | boolean | null)[] | null = null;
      let pages = 0;
      do {
        const docs = await listSamples(store, q, { after, limit: 7 });
        const json = await listSamplesJson(store, q, QUANTITY_SAMPLE_JSON, { after, limit: 7 });
        expect(json.next).toEqual(docs.next);
        expect(json.count).toBe(docs.items.length);
        expect(`{"data":[${json.json}],"next_cursor":"c"}`).toBe(serialize({ data: docs.items.map(toQuantitySample), next_cursor: 'c' }));
        after = docs.next;
        pages++;
      } while (after);
      // 40 samples; merged: the 20 listed, and 3 stored before the merged view (no `hidden`).
      expect(pages).toBe(view === 'all' ? 6 : 4);
      await store.close();
    });
  }
});
