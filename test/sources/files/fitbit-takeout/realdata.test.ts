import { describe, expect, it } from 'vitest';
import { filesUnder, zipEntries } from '../../../fixtures/zip/buildZip.js';
import { bufferByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import { fitbitTakeoutDecoder } from '../../../../src/sources/files/fitbit-takeout/fitbitTakeoutDecoder.js';
import { countByKind, decodeAll } from '../decodeAll.js';
import { realdataPath } from '../realdata.js';

/**
 * The real Fitbit exports in ../shared/realdata/fitbit, zipped here as Takeout would hold them
 * (read in place; nothing is copied into the repository). Counts are what each file holds.
 */
const cases = [
  {
    name: 'rlo879_takeout (Takeout, both layouts)',
    dir: realdataPath('fitbit', 'rlo879_takeout'),
    prefix: '',
    expected: { 'quantity:heart_rate': 3662, 'quantity:step_count': 173, 'quantity:distance': 76, 'quantity:total_energy_burned': 13863, 'quantity:resting_heart_rate': 32, 'quantity:vo2_max': 188, 'quantity:body_mass': 10, 'quantity:body_mass_index': 10, 'quantity:body_fat_percentage': 1, 'quantity:sleep_score': 1, sleep_session: 6, workout: 73 },
  },
  {
    name: 'fitport_user-site-export (the older account export)',
    dir: realdataPath('fitbit', 'fitport_user-site-export'),
    prefix: 'MyFitbitData/user-site-export/',
    expected: { 'quantity:height': 1, 'quantity:heart_rate': 6410, 'quantity:step_count': 7, 'quantity:distance': 7, 'quantity:resting_heart_rate': 3, 'quantity:vo2_max': 9, 'quantity:body_mass': 30, 'quantity:body_mass_index': 30, 'quantity:body_fat_percentage': 25, sleep_session: 38, workout: 80 },
  },
  {
    name: 'bg_control_fitness (the CSV layout, folders renamed)',
    dir: realdataPath('fitbit', 'bg_control_fitness'),
    prefix: 'Takeout/Fitbit/',
    expected: { 'quantity:sleep_score': 1373, 'quantity:hrv_rmssd': 1, 'quantity:respiratory_rate': 1, 'quantity:oxygen_saturation': 74, 'quantity:readiness_score': 30, 'quantity:sleeping_wrist_temperature': 31 },
  },
];

describe('fitbit-takeout on the real exports (issue 21 acceptance)', () => {
  for (const c of cases) {
    it.skipIf(!c.dir)(`${c.name}: every file that has a home imports, nothing is rejected`, async () => {
      const zip = await zipEntries(filesUnder(c.dir!, c.prefix));
      const { records, rejected } = await decodeAll(fitbitTakeoutDecoder, bufferByteSource(zip));
      expect(rejected).toEqual([]);
      expect(countByKind(records)).toEqual(c.expected);
      expect(new Set(records.map((r) => `${r.kind}:${r.external_id}`)).size).toBe(records.length);
    });
  }
});
