import { describe, expect, it } from 'vitest';
import { filesUnder, zipEntries } from '../../../fixtures/zip/buildZip.js';
import { bufferByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import { samsungHealthDecoder } from '../../../../src/sources/files/samsung-health/samsungHealthDecoder.js';
import { countByKind, decodeAll } from '../decodeAll.js';
import { realdataPath } from '../realdata.js';

/** The real Samsung Health downloads in ../shared/realdata/samsung-health, zipped in place. */
const cases = [
  {
    name: 'gustavo-utpott (weight, exercise, SpO2, sleep, daily steps)',
    dir: realdataPath('samsung-health', 'gustavo-utpott'),
    expected: { 'quantity:body_mass': 120, 'quantity:body_fat_percentage': 98, 'quantity:lean_body_mass': 93, 'quantity:basal_metabolic_rate': 93, 'quantity:oxygen_saturation': 317, 'quantity:sleep_score': 1141, sleep_session: 1170, workout: 3391, daily_summary: 3155 },
  },
  {
    name: 'vnegi10 (heart rate, floors, pedometer day summaries)',
    dir: realdataPath('samsung-health', 'vnegi10'),
    expected: { 'quantity:heart_rate': 9895, 'quantity:flights_climbed': 3054, daily_summary: 1507 },
  },
];

describe('samsung-health on the real downloads (issue 21 acceptance)', () => {
  for (const c of cases) {
    it.skipIf(!c.dir)(`${c.name}: every file that has a home imports, nothing is rejected`, async () => {
      const zip = await zipEntries(filesUnder(c.dir!, 'samsunghealth_user_20231006175776/'));
      const { records, rejected } = await decodeAll(samsungHealthDecoder, bufferByteSource(zip));
      expect(rejected).toEqual([]);
      expect(countByKind(records)).toEqual(c.expected);
      expect(new Set(records.map((r) => `${r.kind}:${r.external_id}`)).size).toBe(records.length);
    });
  }
});
