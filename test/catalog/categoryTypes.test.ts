import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../commands/ingestion/records.js';
import { CATEGORY_TYPES, HEALTHKIT_CATEGORY_TYPE_IDENTIFIERS, isCategoryType } from '../../src/catalog/categoryTypes.js';
import { findQuantityType } from '../../src/catalog/quantityCatalog.js';
import { healthKitParser } from '../../src/sources/files/device-a/healthKitParser.js';

/**
 * The category type names a caller may use (contracts §6: a key of the source order is "a quantity
 * or category type", e.g. sleep_analysis) are the names the device-a parser gives those
 * identifiers (docs/formats/device-a.md "Category types and values").
 */
describe('category type vocabulary (contracts §6 keys; docs/formats/device-a.md)', () => {
  it('names each known HealthKit category identifier as the device-a parser stores it', async () => {
    const lines = HEALTHKIT_CATEGORY_TYPE_IDENTIFIERS.map((type, i) =>
      JSON.stringify({ kind: 'category', uuid: `CAT-${i}`, type, value: 1, start_date: '2026-11-01T08:00:00Z', end_date: '2026-11-01T08:30:00Z' }),
    );
    const records: NormalizedRecord[] = [];
    for await (const item of healthKitParser.parse(gzipSync(lines.join('\n') + '\n'), { provider: 'device-a', receivedAt: '2026-11-22T00:00:00.000Z', dataType: null })) {
      expect('rejected' in item ? item.rejected : null).toBeNull();
      if ('record' in item) records.push(item.record);
    }
    const stored = records.flatMap((r) => (r.kind === 'category' ? [r.type] : []));
    expect(stored).toEqual(CATEGORY_TYPES);
  });

  it('holds sleep_analysis, menstrual_flow, mindful_session and stand_hour, no duplicate and no quantity type', () => {
    for (const t of ['sleep_analysis', 'menstrual_flow', 'mindful_session', 'stand_hour', 'high_heart_rate_event', 'chest_tightness_or_pain']) expect(isCategoryType(t), t).toBe(true);
    expect(new Set(CATEGORY_TYPES).size).toBe(CATEGORY_TYPES.length);
    expect(CATEGORY_TYPES.filter((t) => findQuantityType(t))).toEqual([]);
    expect(isCategoryType('heart_rate')).toBe(false);
    expect(isCategoryType('SleepAnalysis')).toBe(false);
  });
});
