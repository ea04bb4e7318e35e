import { describe, expect, it } from 'vitest';
import { LOINC_DISPLAYS } from '../../src/catalog/loincDisplays.js';
import { QUANTITY_CATALOG } from '../../src/catalog/quantityCatalog.js';
import { quantityTypeName } from '../../src/catalog/quantityTypeNames.js';

describe('the catalog names what FHIR codings show (issue 23: codings with display from the catalog, code.text a human name)', () => {
  it('every LOINC code of the quantity catalog has a display', () => {
    const missing = QUANTITY_CATALOG.filter((t) => t.loinc_code !== null && !LOINC_DISPLAYS[t.loinc_code]).map((t) => `${t.type} ${t.loinc_code}`);
    expect(missing).toEqual([]);
  });

  it('every quantity type has a human name: its words, capitalised, or a better one', () => {
    expect(quantityTypeName('heart_rate')).toBe('Heart rate');
    expect(quantityTypeName('hrv_sdnn')).toBe('Heart rate variability (SDNN)');
    expect(quantityTypeName('vo2_max')).toBe('VO2 max');
    for (const t of QUANTITY_CATALOG) expect(quantityTypeName(t.type)).toMatch(/^[A-Z][A-Za-z0-9 ()-]+$/);
  });
});
