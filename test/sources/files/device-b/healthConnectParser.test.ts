import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { NormalizedRecord, ParseItem, RejectedItem } from '../../../../commands/ingestion/records.js';
import { converter } from '../../../../src/catalog/units.js';
import { findQuantityType } from '../../../../src/catalog/quantityCatalog.js';
import { BodyError, bodyChunks, RecordsReader, type BodyRecord } from '../../../../src/sources/files/device-b/decodeStream.js';
import { EXERCISE_ACTIVITY, HEALTH_CONNECT_RECORD_TYPES, healthConnectParser } from '../../../../src/sources/files/device-b/healthConnectParser.js';
import { healthConnectDeviceKind } from '../../../../src/sources/shared/vendors.js';
import { UnreadableExportError } from '../../../../src/sources/files/exportShared/unreadableExport.js';

const FIXTURE = readFileSync(new URL('../../../fixtures/device-b/upload.json', import.meta.url));
const P = 'device-b';

/** `unreadable`: the verdict on a body that cannot be read as a whole (the upload ends failed with it, contracts §17). */
async function parse(payload: Buffer | string): Promise<{ records: NormalizedRecord[]; rejected: RejectedItem[]; items: ParseItem[]; unreadable: string | null }> {
  const items: ParseItem[] = [];
  let unreadable: string | null = null;
  try {
    for await (const item of healthConnectParser.parse(Buffer.isBuffer(payload) ? payload : Buffer.from(payload), { provider: P, receivedAt: '2026-11-22T00:00:00.000Z', dataType: null })) items.push(item);
  } catch (err) {
    if (!(err instanceof UnreadableExportError)) throw err;
    unreadable = err.message;
  }
  return {
    items,
    unreadable,
    records: items.flatMap((i) => ('record' in i ? [i.record] : [])),
    rejected: items.flatMap((i) => ('rejected' in i ? [i.rejected] : [])),
  };
}

const body = (...records: unknown[]) => JSON.stringify({ records });

// ---------------------------------------------------------------------------------------------
// Expected records of the fixture, built from the same pieces the fixture is made of.

const FIT = 'com.google.android.apps.fitness';
const SH = 'com.sec.android.app.shealth';
const OURA_PKG = 'com.ouraring.oura';
const WITHINGS_PKG = 'com.withings.wiscale2';
const OMRON_PKG = 'jp.co.omron.healthcare.omronconnect';
const MFP = 'com.myfitnesspal.android';

const PIXEL_WATCH = { manufacturer: 'Google', model: 'Pixel Watch 2', type: 1 };
const PIXEL_PHONE = { manufacturer: 'Google', model: 'Pixel 8', type: 2 };
const GALAXY_WATCH = { manufacturer: 'Samsung', model: 'Galaxy Watch6', type: 'TYPE_WATCH' };
const GALAXY_PHONE = { manufacturer: 'Samsung', model: 'SM-S921B', type: 2 };
const OURA = { manufacturer: 'Oura', model: 'Oura Ring Gen3', type: 4 };
const WITHINGS = { manufacturer: 'Withings', model: 'Body+', type: 3 };
const OMRON = { manufacturer: 'OMRON', model: 'M7 Intelli IT', type: 0 };
const DEXCOM = { manufacturer: 'Dexcom', model: 'G7', type: 0 };

type Dev = { manufacturer: string; model: string; type: number | string } | null;
type Src = { pkg: string; device: Dev; source: string; body_worn: boolean; method: number };

const src = (pkg: string, device: Dev, source: string, body_worn: boolean, method = 2): Src => ({ pkg, device, source, body_worn, method });

/** Health Connect metadata as sent (contracts §3: metadata.id, dataOrigin, device, recordingMethod, lastModifiedTime). */
function sent(id: string, s: Src, modified: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    dataOrigin: { packageName: s.pkg },
    lastModifiedTime: modified,
    recordingMethod: s.method,
    ...('clientRecordId' in extra ? { clientRecordId: extra.clientRecordId } : {}),
    ...('clientRecordVersion' in extra ? { clientRecordVersion: extra.clientRecordVersion } : {}),
    ...(s.device ? { device: s.device } : {}),
  };
}

/** "manufacturer model", without repeating a manufacturer the model already names ("Oura Ring Gen3"). */
function provenance(s: Src) {
  const device = s.device ? (s.device.model.startsWith(s.device.manufacturer) ? s.device.model : `${s.device.manufacturer} ${s.device.model}`) : null;
  return { provider: P, source: s.source, device, body_worn: s.body_worn };
}

function q(
  s: Src,
  externalId: string,
  type: string,
  value: number,
  unit: string,
  start: string,
  end: string,
  metadata: Record<string, unknown>,
): NormalizedRecord {
  return {
    kind: 'quantity',
    ...provenance(s),
    external_id: externalId,
    type,
    value,
    unit,
    start_date: start,
    end_date: end,
    source_name: null,
    source_bundle_id: s.pkg,
    device_model: s.device?.model ?? null,
    product_type: null,
    was_user_entered: s.method === 3,
    metadata: { original_value: value, original_unit: unit, ...metadata, timezone: '+01:00' },
  };
}

const pixelWatch = src(FIT, PIXEL_WATCH, 'google', true);
const pixelWatchActive = src(FIT, PIXEL_WATCH, 'google', true, 1);
const pixelPhone = src(FIT, PIXEL_PHONE, 'google', false);
const galaxyWatch = src(SH, GALAXY_WATCH, 'samsung', true);
const galaxyPhone = src(SH, GALAXY_PHONE, 'samsung', false);
const galaxyPhoneManual = src(SH, GALAXY_PHONE, 'samsung', false, 3);
const oura = src(OURA_PKG, OURA, 'oura', true);
const withings = src(WITHINGS_PKG, WITHINGS, 'withings', false);
const omron = src(OMRON_PKG, OMRON, 'omron', false);
const dexcom = src('com.dexcom.g7', DEXCOM, 'dexcom', false);
const fitManual = src(FIT, null, 'google', false, 3);
const mfp = src(MFP, null, 'myfitnesspal', false, 3);

function hrSeries(id: string, s: Src, modified: string, samples: [string, number][], extra: Record<string, unknown> = {}) {
  return samples.map(([time, bpm], i) => q(s, `${id}:${i}`, 'heart_rate', bpm, 'count/min', time, time, sent(id, s, modified, extra)));
}

const HR1 = '0f3c9a4e-7b1d-4c2a-9e51-2d8f6a1b3c01';
const HR2 = 'a7d2e9c1-55f0-4b8e-8c3d-91e4b7f20a02';
const HR3 = '5b8e1f37-0c4a-4d19-b2e6-7a3c9d0e4f03';
const RUN = 'f7b6c3d8-2e9a-4a10-bc47-8d1e5f6a3b07';
const SLEEP = '4bf718dc-ac5e-4061-8d94-8f3e1b5a7c11';
const BP = '07b3d492-681a-4c3d-8954-4be3d1708223';

const run11 = (hhmm: string) => `2026-11-11T${hhmm}:00.000Z`;
const phase = (p: string, a: string, b: string) => ({ phase: p, start_date: a, end_date: b });
const flowCategory = (id: string, time: string, value: string) => ({
  kind: 'category' as const,
  ...provenance(galaxyPhoneManual),
  external_id: id,
  type: 'menstrual_flow',
  value,
  start_date: time,
  end_date: time,
  source_name: null,
  source_bundle_id: SH,
  device_model: 'SM-S921B',
  product_type: null,
  was_user_entered: true,
  metadata: {
    ...sent(id, galaxyPhoneManual, time.replace('.000Z', 'Z')),
    flow: undefined as unknown,
    timezone: time < '2026-11' ? '+02:00' : '+01:00',
  },
});

/** Every record of test/fixtures/device-b/upload.json, in the order the parser yields them. */
function expectedFixtureRecords(): NormalizedRecord[] {
  const flows: [string, string, number | string, string][] = [
    ['4bf718d6-ac5e-4071-8d98-8f27b5b4c627', '2026-10-14T06:00:00.000Z', 3, 'heavy'],
    ['5c0829e7-bd6f-4182-9ea9-9038c6c5d728', '2026-10-15T06:00:00.000Z', 2, 'medium'],
    ['6d193af8-ce70-4293-afba-a149d7d6e829', '2026-10-16T06:00:00.000Z', 'FLOW_LIGHT', 'light'],
    ['8f3b5c1b-e092-44b5-81dc-c36bf9f80a31', '2026-11-11T07:30:00.000Z', 2, 'medium'],
    ['904c6d2c-f1a3-45c6-92ed-d47c0a091b32', '2026-11-12T07:30:00.000Z', 3, 'heavy'],
    ['a15d7e3d-02b4-46d7-a3fe-e58d1b1a2c33', '2026-11-13T23:30:00.000Z', 1, 'light'],
  ];
  const flowRecords = flows.map(([id, time, sentFlow, value]) => {
    const r = flowCategory(id, time, value);
    r.metadata.flow = sentFlow;
    return r;
  });
  const [flowOct14, flowOct15, flowOct16, flowNov11, flowNov12, flowNov14] = flowRecords;

  return [
    ...hrSeries(HR1, pixelWatch, '2026-11-10T07:05:12Z', [
      ['2026-11-10T07:00:00.000Z', 62],
      ['2026-11-10T07:01:00.000Z', 64],
      ['2026-11-10T07:02:00.000Z', 63],
      ['2026-11-10T07:03:00.000Z', 66],
      ['2026-11-10T07:04:00.000Z', 65],
    ]),
    // samples[1] (0 bpm) is rejected; the other samples keep their own index.
    ...hrSeries(HR2, galaxyWatch, '2026-11-10T09:20:44Z', [['2026-11-10T09:15:00.000Z', 71]], { clientRecordId: 'shealth-hr-20261110-0915', clientRecordVersion: 1 }),
    q(galaxyWatch, `${HR2}:2`, 'heart_rate', 73, 'count/min', '2026-11-10T09:17:00.000Z', '2026-11-10T09:17:00.000Z', sent(HR2, galaxyWatch, '2026-11-10T09:20:44Z', { clientRecordId: 'shealth-hr-20261110-0915', clientRecordVersion: 1 })),
    ...hrSeries(HR3, pixelWatchActive, '2026-11-11T07:12:30Z', [
      [run11('06:35'), 142],
      [run11('06:40'), 151],
      [run11('06:45'), 158],
      [run11('06:50'), 163],
      [run11('06:55'), 167],
      [run11('07:00'), 160],
    ]),
    q(pixelWatch, 'c41d7a20-9e3b-4f6c-a8d5-0b2e6f9c1d04', 'step_count', 1250, 'count', '2026-11-10T07:00:00.000Z', '2026-11-10T08:00:00.000Z', sent('c41d7a20-9e3b-4f6c-a8d5-0b2e6f9c1d04', pixelWatch, '2026-11-10T08:01:02Z')),
    q(pixelPhone, 'd92f0b61-3a7e-4c85-9f1d-6e4a2c8b7e05', 'step_count', 3400, 'count', '2026-11-10T12:00:00.000Z', '2026-11-10T13:00:00.000Z', sent('d92f0b61-3a7e-4c85-9f1d-6e4a2c8b7e05', pixelPhone, '2026-11-10T13:00:40Z')),
    q(pixelWatchActive, 'e13a8c42-6d0f-4b27-8e9a-3c5f1d7b2a06', 'step_count', 5120, 'count', run11('06:30'), run11('07:10'), sent('e13a8c42-6d0f-4b27-8e9a-3c5f1d7b2a06', pixelWatchActive, '2026-11-11T07:12:30Z')),
    // (the ExerciseSession comes after every record: its summary needs the whole upload)
    q(pixelWatchActive, '18c4e5a9-7f2b-4d3e-9a61-5c0b8e2d4f08', 'distance', 7423.5, 'm', run11('06:30'), run11('07:10'), {
      ...sent('18c4e5a9-7f2b-4d3e-9a61-5c0b8e2d4f08', pixelWatchActive, '2026-11-11T07:12:30Z'),
      original_value: 7.4235,
      original_unit: 'km',
    }),
    q(pixelWatchActive, '29d5f6ba-8a3c-4e4f-ab72-6d1c9f3e5a09', 'active_energy_burned', 512.3, 'kcal', run11('06:30'), run11('07:10'), sent('29d5f6ba-8a3c-4e4f-ab72-6d1c9f3e5a09', pixelWatchActive, '2026-11-11T07:12:30Z')),
    q(galaxyPhone, '3ae607cb-9b4d-4f50-bc83-7e2d0a4f6b10', 'total_energy_burned', 2301.62523901, 'kcal', '2026-11-10T00:00:00.000Z', '2026-11-11T00:00:00.000Z', {
      ...sent('3ae607cb-9b4d-4f50-bc83-7e2d0a4f6b10', galaxyPhone, '2026-11-11T00:05:00Z'),
      original_value: 9630,
      original_unit: 'kJ',
    }),
    {
      kind: 'sleep_session',
      ...provenance(oura),
      external_id: SLEEP,
      bedtime_start: '2026-11-09T22:40:00.000Z',
      bedtime_end: '2026-11-10T06:10:00.000Z',
      total_sleep_seconds: 24420, // light 242 min + deep 85 min + rem 80 min
      deep_sleep_seconds: 5100,
      rem_sleep_seconds: 4800,
      light_sleep_seconds: 14520,
      awake_seconds: 2580, // awake 28 min + awake in bed 15 min
      sleep_score: null,
      hrv_avg_ms: null,
      resting_hr: null,
      respiratory_rate: null,
      spo2_avg: null,
      phases: [
        phase('in_bed', '2026-11-09T22:40:00.000Z', '2026-11-09T22:55:00.000Z'),
        phase('light', '2026-11-09T22:55:00.000Z', '2026-11-09T23:40:00.000Z'),
        phase('deep', '2026-11-09T23:40:00.000Z', '2026-11-10T00:35:00.000Z'),
        phase('light', '2026-11-10T00:35:00.000Z', '2026-11-10T01:50:00.000Z'),
        phase('rem', '2026-11-10T01:50:00.000Z', '2026-11-10T02:20:00.000Z'),
        phase('awake', '2026-11-10T02:20:00.000Z', '2026-11-10T02:28:00.000Z'),
        phase('light', '2026-11-10T02:28:00.000Z', '2026-11-10T03:40:00.000Z'),
        phase('deep', '2026-11-10T03:40:00.000Z', '2026-11-10T04:10:00.000Z'),
        phase('rem', '2026-11-10T04:10:00.000Z', '2026-11-10T05:00:00.000Z'),
        phase('light', '2026-11-10T05:00:00.000Z', '2026-11-10T05:50:00.000Z'),
        phase('awake', '2026-11-10T05:50:00.000Z', '2026-11-10T06:10:00.000Z'),
      ] as never,
      metadata: { ...sent(SLEEP, oura, '2026-11-10T07:30:00Z', { clientRecordId: 'oura-sleep-2026-11-10', clientRecordVersion: 3 }), title: 'Sleep', timezone: '+01:00' },
    },
    q(oura, '5c0829ed-bd6f-4172-9ea5-903f2c6b8d12', 'hrv_rmssd', 48.5, 'ms', '2026-11-10T06:10:00.000Z', '2026-11-10T06:10:00.000Z', sent('5c0829ed-bd6f-4172-9ea5-903f2c6b8d12', oura, '2026-11-10T07:30:00Z')),
    q(oura, '6d193afe-ce70-4283-afb6-a14f3d7c9e13', 'resting_heart_rate', 54, 'count/min', '2026-11-10T06:10:00.000Z', '2026-11-10T06:10:00.000Z', sent('6d193afe-ce70-4283-afb6-a14f3d7c9e13', oura, '2026-11-10T07:30:00Z')),
    q(oura, '7e2a4b0f-df81-4394-b0c7-b25a4e8d0f14', 'oxygen_saturation', 96.5, '%', '2026-11-10T03:00:00.000Z', '2026-11-10T03:00:00.000Z', sent('7e2a4b0f-df81-4394-b0c7-b25a4e8d0f14', oura, '2026-11-10T07:30:00Z')),
    q(oura, '8f3b5c1a-e092-44a5-81d8-c36b5f9e1a15', 'respiratory_rate', 14.2, 'count/min', '2026-11-10T03:00:00.000Z', '2026-11-10T03:00:00.000Z', sent('8f3b5c1a-e092-44a5-81d8-c36b5f9e1a15', oura, '2026-11-10T07:30:00Z')),
    // 154.3 lb × 0.45359237 kg/lb
    q(withings, '904c6d2b-f1a3-45b6-92e9-d47c6a0f2b16', 'body_mass', 69.989302691, 'kg', '2026-11-10T06:30:00.000Z', '2026-11-10T06:30:00.000Z', {
      ...sent('904c6d2b-f1a3-45b6-92e9-d47c6a0f2b16', withings, '2026-11-10T06:31:10Z', { clientRecordId: 'withings-meas-88412907', clientRecordVersion: 1 }),
      original_value: 154.3,
      original_unit: '[lb_av]',
    }),
    q(withings, 'a15d7e3c-02b4-46c7-a3fa-e58d7b1a3c17', 'body_fat_percentage', 18.4, '%', '2026-11-10T06:30:00.000Z', '2026-11-10T06:30:00.000Z', sent('a15d7e3c-02b4-46c7-a3fa-e58d7b1a3c17', withings, '2026-11-10T06:31:10Z', { clientRecordId: 'withings-meas-88412908', clientRecordVersion: 1 })),
    // (99.1 °F − 32) × 5/9
    q(fitManual, 'b26e8f4d-13c5-47d8-b40b-f69e8c2b4d18', 'body_temperature', 37.2777777778, 'degC', '2026-11-12T20:00:00.000Z', '2026-11-12T20:00:00.000Z', {
      ...sent('b26e8f4d-13c5-47d8-b40b-f69e8c2b4d18', fitManual, '2026-11-12T20:01:00Z'),
      measurementLocation: 4,
      original_value: 99.1,
      original_unit: '[degF]',
    }),
    q(fitManual, 'c37f905e-24d6-48e9-851b-07af9d3c5e19', 'height', 1.7526, 'm', '2026-11-01T09:00:00.000Z', '2026-11-01T09:00:00.000Z', {
      ...sent('c37f905e-24d6-48e9-851b-07af9d3c5e19', fitManual, '2026-11-01T09:00:30Z'),
      original_value: 69,
      original_unit: '[in_i]',
    }),
    q(galaxyPhone, 'd480a16f-35e7-490a-9621-18b0ae4d6f20', 'basal_metabolic_rate', 1620, 'kcal/d', '2026-11-10T06:00:00.000Z', '2026-11-10T06:00:00.000Z', sent('d480a16f-35e7-490a-9621-18b0ae4d6f20', galaxyPhone, '2026-11-10T06:00:30Z')),
    q(pixelWatch, 'e591b270-46f8-4a1b-a732-29c1bf5e7021', 'vo2_max', 46.2, 'mL/(kg*min)', run11('07:10'), run11('07:10'), {
      ...sent('e591b270-46f8-4a1b-a732-29c1bf5e7021', pixelWatch, '2026-11-11T07:12:30Z'),
      measurementMethod: 5,
    }),
    q(pixelPhone, 'f6a2c381-5709-4b2c-b843-3ad2c06f8122', 'flights_climbed', 12, 'count', '2026-11-10T08:00:00.000Z', '2026-11-10T09:00:00.000Z', sent('f6a2c381-5709-4b2c-b843-3ad2c06f8122', pixelPhone, '2026-11-10T09:00:40Z')),
    {
      kind: 'observation',
      ...provenance(omron),
      external_id: BP,
      code: 'blood_pressure',
      loinc_code: '85354-9',
      start_date: '2026-11-12T07:15:00.000Z',
      end_date: '2026-11-12T07:15:00.000Z',
      components: [
        { code: 'systolic', loinc_code: '8480-6', value: 128, unit: 'mmHg' },
        { code: 'diastolic', loinc_code: '8462-4', value: 82, unit: 'mmHg' },
      ],
      metadata: {
        ...sent(BP, omron, '2026-11-12T07:16:05Z', { clientRecordId: 'omron-bp-20261112-0815', clientRecordVersion: 1 }),
        bodyPosition: 2,
        measurementLocation: 1,
        timezone: '+01:00',
      },
    },
    ...(['systolic', 'diastolic'] as const).map((c) =>
      q(omron, `${BP}:${c}`, `blood_pressure_${c}`, c === 'systolic' ? 128 : 82, 'mmHg', '2026-11-12T07:15:00.000Z', '2026-11-12T07:15:00.000Z', {
        ...sent(BP, omron, '2026-11-12T07:16:05Z', { clientRecordId: 'omron-bp-20261112-0815', clientRecordVersion: 1 }),
        bodyPosition: 2,
        measurementLocation: 1,
      }),
    ),
    // 5.6 mmol/L × 180.156 g/mol (glucose)
    q(dexcom, '18c4e5a3-792b-4d4e-9a65-5cf4e2819324', 'blood_glucose', 100.88736, 'mg/dL', '2026-11-12T08:00:00.000Z', '2026-11-12T08:00:00.000Z', {
      ...sent('18c4e5a3-792b-4d4e-9a65-5cf4e2819324', dexcom, '2026-11-12T08:05:00Z'),
      specimenSource: 1,
      mealType: 1,
      relationToMeal: 3,
      original_value: 5.6,
      original_unit: 'mmol/L',
    }),
    {
      kind: 'nutrition',
      ...provenance(mfp),
      external_id: '29d5f6b4-8a3c-4e5f-ab76-6d05f392a425',
      start_date: '2026-11-12T11:30:00.000Z',
      end_date: '2026-11-12T11:45:00.000Z',
      name: 'Chicken salad',
      meal_type: 'lunch',
      energy_kcal: 520,
      protein_g: 38,
      carbohydrates_g: 22.5,
      fat_g: 30,
      fiber_g: 6,
      sugar_g: 8,
      sodium_mg: 780,
      water_ml: null,
      nutrients: {
        saturated_fat: { value: 6.5, unit: 'g' },
        potassium: { value: 900, unit: 'mg' },
        vitamin_c: { value: 45, unit: 'mg' },
        vitamin_d: { value: 1.2, unit: 'mcg' },
      },
      metadata: {
        ...sent('29d5f6b4-8a3c-4e5f-ab76-6d05f392a425', mfp, '2026-11-12T11:50:00Z', { clientRecordId: 'mfp-entry-5512093' }),
        mealType: 2,
        timezone: '+01:00',
        original_values: { sodium: { value: 0.78, unit: 'g' } },
      },
    },
    // 16 US fl oz
    q(mfp, '3ae607c5-9b4d-4f60-bc87-7e16a4a3b526', 'dietary_water', 473.176473, 'mL', '2026-11-12T10:00:00.000Z', '2026-11-12T10:01:00.000Z', {
      ...sent('3ae607c5-9b4d-4f60-bc87-7e16a4a3b526', mfp, '2026-11-12T10:01:30Z'),
      original_value: 16,
      original_unit: '[foz_us]',
    }),
    flowOct14!,
    flowOct15!,
    flowOct16!,
    flowNov11!,
    flowNov12!,
    flowNov14!,
    {
      kind: 'workout',
      ...provenance(pixelWatchActive),
      external_id: RUN,
      type: 'running',
      start_date: run11('06:30'),
      end_date: run11('07:10'),
      duration_s: 2400,
      // Summed from the same app's records inside the session.
      active_energy_kcal: 512.3,
      distance_m: 7423.5,
      avg_heart_rate: 156.8,
      max_heart_rate: 167,
      steps: 5120,
      route: [
        { timestamp: '2026-11-11T06:30:05.000Z', latitude: 52.5145, longitude: 13.3501, altitude_m: 34.2, speed_mps: null, course_deg: null, horizontal_accuracy_m: 4.5 },
        { timestamp: '2026-11-11T06:45:00.000Z', latitude: 52.5139, longitude: 13.3622, altitude_m: 36, speed_mps: null, course_deg: null, horizontal_accuracy_m: 3.8 },
        // 115 ft
        { timestamp: '2026-11-11T07:00:00.000Z', latitude: 52.5098, longitude: 13.3577, altitude_m: 35.052, speed_mps: null, course_deg: null, horizontal_accuracy_m: 5.1 },
        { timestamp: '2026-11-11T07:09:50.000Z', latitude: 52.5144, longitude: 13.3503, altitude_m: null, speed_mps: null, course_deg: null, horizontal_accuracy_m: null },
      ],
      metadata: {
        ...sent(RUN, pixelWatchActive, '2026-11-11T07:12:30Z'),
        exerciseType: 56,
        exercise_type_name: 'EXERCISE_TYPE_RUNNING',
        title: 'Morning run',
        notes: 'Tiergarten loop',
        laps: [
          { startTime: '2026-11-11T06:30:00Z', endTime: '2026-11-11T06:50:00Z', length: { inMeters: 3700 } },
          { startTime: '2026-11-11T06:50:00Z', endTime: '2026-11-11T07:10:00Z', length: { inMeters: 3723.5 } },
        ],
        timezone: '+01:00',
      },
    },
    {
      kind: 'menstrual_cycle',
      ...provenance(galaxyPhoneManual),
      external_id: `cycle:${SH}:2026-10-14`,
      start_date: '2026-10-14',
      period_end_date: '2026-10-16',
      period_length_days: 3,
      cycle_length_days: 28,
      flow: { '2026-10-14': 'heavy', '2026-10-15': 'medium', '2026-10-16': 'light' },
      metadata: {
        dataOrigin: { packageName: SH },
        record_ids: ['4bf718d6-ac5e-4071-8d98-8f27b5b4c627', '5c0829e7-bd6f-4182-9ea9-9038c6c5d728', '6d193af8-ce70-4293-afba-a149d7d6e829'],
        timezone: '+02:00',
      },
    },
    {
      kind: 'menstrual_cycle',
      ...provenance(galaxyPhoneManual),
      external_id: `cycle:${SH}:2026-11-11`,
      start_date: '2026-11-11',
      // 13 Nov has no flow record but lies inside the MenstruationPeriod (local 11–14 Nov).
      period_end_date: '2026-11-14',
      period_length_days: 4,
      cycle_length_days: null,
      // The flow of 2026-11-13T23:30Z at +01:00 is on the local 14th.
      flow: { '2026-11-11': 'medium', '2026-11-12': 'heavy', '2026-11-14': 'light' },
      metadata: {
        dataOrigin: { packageName: SH },
        record_ids: ['7e2a4b09-df81-43a4-b0cb-b25ae8e7f930', '8f3b5c1b-e092-44b5-81dc-c36bf9f80a31', '904c6d2c-f1a3-45c6-92ed-d47c0a091b32', 'a15d7e3d-02b4-46d7-a3fe-e58d1b1a2c33'],
        timezone: '+01:00',
      },
    },
  ];
}

describe('device-b: Health Connect upload (contracts §3 device-b)', () => {
  it('turns the fixture into the expected records, record for record: values in storage units (§4), UTC times, provenance with body_worn, metadata as sent plus timezone and original value/unit', async () => {
    const { records } = await parse(FIXTURE);
    const expected = expectedFixtureRecords();
    expect(records.length).toBe(expected.length);
    records.forEach((r, i) => expect(r, `record ${i} (${r.external_id})`).toEqual(expected[i]));
  });

  it('keeps the bad items of the fixture as rejected items naming the record, the reason and at most 1 KiB of it (§3: lines that cannot be stored are kept for inspection)', async () => {
    const { rejected } = await parse(FIXTURE);
    const fixture = JSON.parse(FIXTURE.toString('utf8')) as { records: unknown[] };
    expect(rejected.map(({ location, reason }) => ({ location, reason }))).toEqual([
      { location: 'record 2', reason: `HeartRate ${HR2} samples[1]: beatsPerMinute 0 count/min is outside 1..300 count/min for heart_rate` },
      { location: 'record 34', reason: 'HeartRate: metadata.id is missing' },
      { location: 'record 35', reason: 'CervicalMucus b26e8f4e-13c5-47e8-b402-f69e2c1b3d34: unknown recordType "CervicalMucus"' },
      { location: 'record 36', reason: 'Steps c37f905f-24d6-48f9-8516-07afd3e4f535: endTime is before startTime' },
    ]);
    expect(rejected[0]!.excerpt).toBe('{"time":"2026-11-10T09:16:00Z","beatsPerMinute":0}');
    for (const [i, n] of [[1, 34], [2, 35], [3, 36]] as const) expect(rejected[i]!.excerpt).toBe(JSON.stringify(fixture.records[n - 1]));
    for (const r of rejected) expect(Buffer.byteLength(r.excerpt)).toBeLessThanOrEqual(1024);
  });

  it('reads a gzip-compressed body (magic bytes 1f 8b) exactly like the plain one (§3: optionally Content-Encoding: gzip)', async () => {
    const plain = await parse(FIXTURE);
    const gz = gzipSync(FIXTURE);
    expect(gz.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    const zipped = await parse(gz);
    expect(zipped.items).toEqual(plain.items);
  });

  it('rejects a body that is not JSON as ONE item for the whole object, location "body" (spec Coverage report: an object that failed as a whole counts once), and the upload is unreadable (contracts §17)', async () => {
    for (const payload of [Buffer.from('{"records": [{"recordType": "Steps",'), gzipSync('not json at all')]) {
      const { items, unreadable } = await parse(payload);
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ rejected: { location: 'body', reason: expect.stringMatching(/^body is not valid JSON/) } });
      expect(unreadable).toMatch(/^not a readable Health Connect upload: body is not valid JSON/);
    }
  });

  it('rejects a JSON body without a "records" array, and a corrupt gzip, as one body item each (§3 device-b: {"records":[…]})', async () => {
    for (const [payload, reason] of [
      [Buffer.from('{"data": []}'), 'body is not an object with a "records" array'],
      [Buffer.from('[]'), 'body is not an object with a "records" array'],
      [Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef]), /^body is not valid gzip/],
    ] as const) {
      const { items, unreadable } = await parse(payload);
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ rejected: { location: 'body', reason: typeof reason === 'string' ? reason : expect.stringMatching(reason) } });
      expect(unreadable).toMatch(/^not a readable Health Connect upload: body is not/);
    }
  });

  it('truncates the excerpt of a large rejected record to 1 KiB (RejectedItem.excerpt)', async () => {
    const samples = Array.from({ length: 500 }, (_, i) => ({ time: new Date(Date.UTC(2026, 10, 1, 0, 0, i)).toISOString(), beatsPerMinute: 60 + (i % 20) }));
    const { rejected } = await parse(body({ recordType: 'HeartRate', startTime: '2026-11-01T00:00:00Z', endTime: '2026-11-01T00:10:00Z', samples, metadata: { dataOrigin: { packageName: FIT } } }));
    expect(rejected).toHaveLength(1);
    expect(Buffer.byteLength(rejected[0]!.excerpt)).toBe(1024);
  });
});

// ---------------------------------------------------------------------------------------------

const meta = (id: string, extra: Record<string, unknown> = {}) => ({ id, dataOrigin: { packageName: FIT }, recordingMethod: 2, ...extra });

async function one(record: Record<string, unknown>) {
  const { records, rejected } = await parse(body(record));
  return { record: records[0], records, rejected };
}

describe('device-b units: Health Connect unit objects converted through UCUM to the storage unit (contracts §4)', () => {
  const cases: [recordType: string, field: string, unitObject: Record<string, number>, type: string, fromUcum: string][] = [
    ['Weight', 'weight', { inPounds: 154.3 }, 'body_mass', '[lb_av]'],
    ['Weight', 'weight', { inOunces: 2500 }, 'body_mass', '[oz_av]'],
    ['Weight', 'weight', { inGrams: 70200 }, 'body_mass', 'g'],
    ['BodyTemperature', 'temperature', { inFahrenheit: 98.6 }, 'body_temperature', '[degF]'],
    ['Height', 'height', { inFeet: 5.75 }, 'height', '[ft_i]'],
    ['Height', 'height', { inInches: 69 }, 'height', '[in_i]'],
    ['Hydration', 'volume', { inLiters: 0.5 }, 'dietary_water', 'L'],
    ['Distance', 'distance', { inMiles: 3.1 }, 'distance', '[mi_i]'],
    ['ActiveCaloriesBurned', 'energy', { inKilojoules: 1000 }, 'active_energy_burned', 'kJ'],
    ['ActiveCaloriesBurned', 'energy', { inCalories: 250000 }, 'active_energy_burned', 'cal'],
    ['TotalCaloriesBurned', 'energy', { inJoules: 8_000_000 }, 'total_energy_burned', 'J'],
    ['BasalMetabolicRate', 'basalMetabolicRate', { inWatts: 80 }, 'basal_metabolic_rate', 'W'],
  ];
  const interval = { startTime: '2026-11-01T10:00:00Z', endTime: '2026-11-01T11:00:00Z' };
  const instant = { time: '2026-11-01T10:00:00Z' };

  it.each(cases)('%s.%s %o is converted by UCUM to the storage unit of %s, keeping original_value and original_unit', async (recordType, field, unitObject, type, fromUcum) => {
    const isInterval = ['Hydration', 'Distance', 'ActiveCaloriesBurned', 'TotalCaloriesBurned'].includes(recordType);
    const { record, rejected } = await one({ recordType, ...(isInterval ? interval : instant), [field]: unitObject, metadata: meta('u-1') });
    expect(rejected).toEqual([]);
    const t = findQuantityType(type)!;
    const sentValue = Object.values(unitObject)[0]!;
    const toUcum = t.ucum_unit.replace(/\{[^}]*\}/g, '') || '1';
    const expected = converter(fromUcum, toUcum)!(sentValue);
    expect(record).toMatchObject({ kind: 'quantity', type, unit: t.unit, metadata: { original_value: sentValue, original_unit: fromUcum } });
    expect((record as { value: number }).value).toBeCloseTo(expected, 6);
  });

  it('stores values already in the storage unit unchanged, with original_value and original_unit all the same (spec Quantity sample metadata)', async () => {
    const { record } = await one({ recordType: 'Weight', time: '2026-11-01T10:00:00Z', zoneOffset: '+01:00', weight: { inKilograms: 70.2 }, metadata: meta('u-2') });
    expect(record).toMatchObject({ type: 'body_mass', value: 70.2, unit: 'kg' });
    expect((record as { metadata: object }).metadata).toMatchObject({ original_value: 70.2, original_unit: 'kg' });
  });

  it('rejects a unit object without a known property of its class, naming the accepted ones', async () => {
    const { records, rejected } = await one({ recordType: 'Weight', time: '2026-11-01T10:00:00Z', weight: { value: 70.2, unit: 'KILOGRAMS' }, metadata: meta('u-3') });
    expect(records).toEqual([]);
    expect(rejected[0]).toMatchObject({ location: 'record 1', reason: 'Weight u-3: weight has no Mass unit property (expected one of inKilograms, inGrams, inMilligrams, inMicrograms, inPounds, inOunces)' });
  });

  it('rejects bad values: non-numbers and values outside Health Connect\'s own ranges', async () => {
    const { rejected } = await parse(
      body(
        { recordType: 'OxygenSaturation', time: '2026-11-01T10:00:00Z', percentage: { value: 140 }, metadata: meta('v-1') },
        { recordType: 'Steps', startTime: '2026-11-01T10:00:00Z', endTime: '2026-11-01T11:00:00Z', count: '1200', metadata: meta('v-2') },
        { recordType: 'BodyTemperature', time: '2026-11-01T10:00:00Z', temperature: { inFahrenheit: 250 }, metadata: meta('v-3') },
        { recordType: 'BloodPressure', time: '2026-11-01T10:00:00Z', systolic: { inMillimetersOfMercury: 250 }, diastolic: { inMillimetersOfMercury: 80 }, metadata: meta('v-4') },
      ),
    );
    expect(rejected.map((r) => [r.location, r.reason])).toEqual([
      ['record 1', 'OxygenSaturation v-1: percentage 140 % is outside 0..100 % for oxygen_saturation'],
      ['record 2', 'Steps v-2: count is not a finite number'],
      ['record 3', 'BodyTemperature v-3: temperature 121.111111111 degC is outside 0..100 degC for body_temperature'],
      ['record 4', 'BloodPressure v-4: systolic 250 mmHg is outside 20..200 mmHg for blood_pressure_systolic'],
    ]);
  });
});

describe('device-b times and identity (contracts §3 device-b: startTime/endTime/time, zone offsets, metadata.id)', () => {
  it('converts instants with any offset to UTC and keeps the zone offset as metadata.timezone', async () => {
    const { record } = await one({ recordType: 'RestingHeartRate', time: '2026-11-01T07:30:00.250+01:00', zoneOffset: '+01:00', beatsPerMinute: 55, metadata: meta('t-1') });
    expect(record).toMatchObject({ start_date: '2026-11-01T06:30:00.250Z', end_date: '2026-11-01T06:30:00.250Z', metadata: { timezone: '+01:00' } });
  });

  it('keeps a differing end offset as metadata.end_timezone (a record across a DST change)', async () => {
    const { record } = await one({ recordType: 'Steps', startTime: '2026-10-25T00:30:00Z', startZoneOffset: '+02:00', endTime: '2026-10-25T01:30:00Z', endZoneOffset: '+01:00', count: 20, metadata: meta('t-2') });
    expect(record).toMatchObject({ metadata: { timezone: '+02:00', end_timezone: '+01:00' } });
  });

  it('rejects invalid times: no offset, impossible dates, bad zone offsets, missing time', async () => {
    const { rejected } = await parse(
      body(
        { recordType: 'Weight', time: '2026-11-01T10:00:00', weight: { inKilograms: 70 }, metadata: meta('t-3') },
        { recordType: 'Weight', time: '2026-02-30T10:00:00Z', weight: { inKilograms: 70 }, metadata: meta('t-4') },
        { recordType: 'Weight', time: '2026-11-01T10:00:00Z', zoneOffset: 'Europe/Berlin', weight: { inKilograms: 70 }, metadata: meta('t-5') },
        { recordType: 'Weight', startTime: '2026-11-01T10:00:00Z', weight: { inKilograms: 70 }, metadata: meta('t-6') },
        { recordType: 'Weight', time: '2026-00-10T10:00:00Z', weight: { inKilograms: 70 }, metadata: meta('t-7') },
        { recordType: 'Weight', time: '2026-13-10T10:00:00Z', weight: { inKilograms: 70 }, metadata: meta('t-8') },
        { recordType: 'Weight', time: '2025-02-29T10:00:00Z', weight: { inKilograms: 70 }, metadata: meta('t-9') },
      ),
    );
    expect(rejected.map((r) => r.reason)).toEqual([
      'Weight t-3: time "2026-11-01T10:00:00" is not an ISO-8601 instant with an offset',
      'Weight t-4: time "2026-02-30T10:00:00Z" is not a valid date and time',
      'Weight t-5: zoneOffset "Europe/Berlin" is not a zone offset such as "+01:00"',
      'Weight t-6: time is missing',
      'Weight t-7: time "2026-00-10T10:00:00Z" is not a valid date and time',
      'Weight t-8: time "2026-13-10T10:00:00Z" is not a valid date and time',
      'Weight t-9: time "2025-02-29T10:00:00Z" is not a valid date and time',
    ]);
  });

  it('requires metadata.id as external_id, and accepts recordType with the Record suffix or fully qualified', async () => {
    const { records, rejected } = await parse(
      body(
        { recordType: 'StepsRecord', startTime: '2026-11-01T10:00:00Z', endTime: '2026-11-01T11:00:00Z', count: 10, metadata: meta('i-1') },
        { recordType: 'androidx.health.connect.client.records.StepsRecord', startTime: '2026-11-01T11:00:00Z', endTime: '2026-11-01T12:00:00Z', count: 10, metadata: meta('i-2') },
        { recordType: 'Steps', startTime: '2026-11-01T12:00:00Z', endTime: '2026-11-01T13:00:00Z', count: 10, metadata: { dataOrigin: { packageName: FIT } } },
        { recordType: 'Steps', startTime: '2026-11-01T12:00:00Z', endTime: '2026-11-01T13:00:00Z', count: 10 },
        'not a record',
      ),
    );
    expect(records.map((r) => r.external_id)).toEqual(['i-1', 'i-2']);
    expect(rejected.map((r) => [r.location, r.reason])).toEqual([
      ['record 3', 'Steps: metadata.id is missing'],
      ['record 4', 'Steps: metadata is missing'],
      ['record 5', 'record: record is not an object'],
    ]);
  });
});

describe('device-b provenance (spec Merged view: source and body-worn rank streams)', () => {
  it('derives source from dataOrigin.packageName, device from manufacturer and model, body_worn from Device.type as int or name', async () => {
    const types: [number | string | undefined, boolean][] = [
      [1, true], // TYPE_WATCH
      [2, false], // TYPE_PHONE
      [3, false], // TYPE_SCALE
      [4, true], // TYPE_RING
      [5, false], // TYPE_HEAD_MOUNTED
      [6, true], // TYPE_FITNESS_BAND
      [7, true], // TYPE_CHEST_STRAP
      [8, false], // TYPE_SMART_DISPLAY
      [0, false], // TYPE_UNKNOWN
      ['TYPE_RING', true],
      ['CHEST_STRAP', true],
      ['fitness_band', true],
      [undefined, false],
    ];
    const { records } = await parse(
      body(
        ...types.map(([type], i) => ({
          recordType: 'RestingHeartRate',
          time: '2026-11-01T06:00:00Z',
          beatsPerMinute: 50,
          metadata: { id: `p-${i}`, dataOrigin: { packageName: 'com.polar.flow' }, device: { manufacturer: 'Polar', model: 'H10', ...(type === undefined ? {} : { type }) } },
        })),
      ),
    );
    expect(records.map((r) => r.body_worn)).toEqual(types.map(([, worn]) => worn));
    expect(records[0]).toMatchObject({ provider: 'device-b', source: 'polar', device: 'Polar H10' });
  });

  it('uses the provider as source for an unknown app and null device without metadata.device; was_user_entered from RECORDING_METHOD_MANUAL_ENTRY', async () => {
    const { record } = await one({ recordType: 'Weight', time: '2026-11-01T06:00:00Z', weight: { inKilograms: 70 }, metadata: { id: 'p-x', dataOrigin: { packageName: 'org.example.diary' }, recordingMethod: 'RECORDING_METHOD_MANUAL_ENTRY' } });
    expect(record).toMatchObject({ source: 'device-b', device: null, body_worn: false, device_model: null, was_user_entered: true, source_bundle_id: 'org.example.diary' });
  });

  it('healthConnectDeviceKind maps Device.TYPE_* to device kinds', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((t) => healthConnectDeviceKind(t))).toEqual(['unknown', 'watch', 'phone', 'scale', 'ring', 'other', 'band', 'chest_strap', 'other', 'unknown']);
    expect(healthConnectDeviceKind('TYPE_FITNESS_BAND')).toBe('band');
    expect(healthConnectDeviceKind(null)).toBe('unknown');
  });
});

describe('device-b sleep sessions (spec Sleep session, Sleep phase)', () => {
  const night = (stages: unknown[]) => ({ recordType: 'SleepSession', startTime: '2026-11-01T22:00:00Z', endTime: '2026-11-02T06:00:00Z', stages, metadata: meta('s-1') });
  const stage = (h: number, stage: unknown) => {
    const start = Date.UTC(2026, 10, 1, 22 + h);
    return { startTime: new Date(start).toISOString(), endTime: new Date(start + 3_600_000).toISOString(), stage };
  };

  it('maps every Health Connect stage, as the int constant or its name, to a phase and the totals', async () => {
    // 0 unknown, 1 awake, 2 sleeping, 3 out of bed, 4 light, 5 deep, 6 REM, 7 awake in bed
    const { record, rejected } = await one(night([stage(0, 0), stage(1, 'STAGE_TYPE_AWAKE'), stage(2, 2), stage(3, 'out_of_bed'), stage(4, 4), stage(5, 'DEEP'), stage(6, 6), stage(7, 7)]));
    expect(rejected).toEqual([]);
    expect(record).toMatchObject({
      kind: 'sleep_session',
      total_sleep_seconds: 4 * 3600, // sleeping, light, deep, REM
      light_sleep_seconds: 3600,
      deep_sleep_seconds: 3600,
      rem_sleep_seconds: 3600,
      awake_seconds: 3 * 3600, // awake, out of bed, awake in bed
    });
    expect((record as { phases: { phase: string }[] }).phases.map((p) => p.phase)).toEqual(['in_bed', 'awake', 'asleep', 'awake', 'light', 'deep', 'rem', 'in_bed']);
  });

  it('counts a session without stages as asleep throughout, with no phases', async () => {
    const { record } = await one(night([]));
    expect(record).toMatchObject({ total_sleep_seconds: 8 * 3600, awake_seconds: 0, phases: [] });
  });

  it('rejects a session with an unknown stage or a stage outside the session', async () => {
    const { rejected } = await parse(body(night([stage(0, 9)]), { ...night([{ startTime: '2026-11-02T05:30:00Z', endTime: '2026-11-02T07:00:00Z', stage: 4 }]), metadata: meta('s-2') }));
    expect(rejected.map((r) => r.reason)).toEqual(['SleepSession s-1: stages[0].stage 9 is not a known value', 'SleepSession s-2: stages[0] is outside the session']);
  });
});

describe('device-b workouts (spec Other resources: workouts with routes)', () => {
  const session = (exerciseType: unknown, id = 'w-1', extra: Record<string, unknown> = {}) => ({
    recordType: 'ExerciseSession',
    startTime: '2026-11-01T08:00:00Z',
    endTime: '2026-11-01T09:00:00Z',
    exerciseType,
    metadata: meta(id),
    ...extra,
  });

  it('maps exercise types (int or name) to canonical activities and keeps the original in metadata', async () => {
    const { records } = await parse(body(session(56, 'a'), session(8, 'b'), session(79, 'c'), session(74, 'd'), session('EXERCISE_TYPE_BIKING', 'e'), session('strength_training', 'f'), session(999, 'g')));
    expect(records.map((r) => (r as { type: string }).type)).toEqual(['running', 'cycling', 'walking', 'swimming', 'cycling', 'strength_training', 'other']);
    expect(records[0]!.metadata).toMatchObject({ exerciseType: 56, exercise_type_name: 'EXERCISE_TYPE_RUNNING' });
    expect(records[6]!.metadata).toMatchObject({ exerciseType: 999 });
    expect(records[6]!.metadata).not.toHaveProperty('exercise_type_name');
    expect(EXERCISE_ACTIVITY.get(70)).toEqual({ name: 'EXERCISE_TYPE_STRENGTH_TRAINING', activity: 'strength_training' });
  });

  it('stores route points from exerciseRoute or exerciseRouteResult, and rejects a bad point without losing the workout', async () => {
    const route = [
      { time: '2026-11-01T08:10:00Z', latitude: 48.1, longitude: 11.5, altitude: { inMeters: 520 } },
      { time: '2026-11-01T08:20:00Z', latitude: 123.4, longitude: 11.5 },
    ];
    const { records, rejected } = await parse(body(session(56, 'r-1', { exerciseRoute: { route } }), session(56, 'r-2', { exerciseRouteResult: { exerciseRoute: { route: route.slice(0, 1) } } })));
    expect(records.map((r) => (r as { route: unknown[] }).route.length)).toEqual([1, 1]);
    expect(rejected).toEqual([
      { location: 'record 1', reason: 'ExerciseSession r-1 exerciseRoute.route[1]: latitude 123.4 is outside -90..90', excerpt: JSON.stringify(route[1]) },
    ]);
  });

  it('leaves the summary null when the app wrote no records inside the session', async () => {
    const { record } = await one(session(79));
    expect(record).toMatchObject({ active_energy_kcal: null, distance_m: null, avg_heart_rate: null, max_heart_rate: null, steps: null, duration_s: 3600 });
  });
});

describe('device-b menstrual cycles (contracts §3 device-b grouping: a cycle starts at a flow day after ≥ 2 days without flow, or at a MenstruationPeriod start)', () => {
  const flow = (date: string, f: unknown = 2) => ({ recordType: 'MenstruationFlow', time: `${date}T08:00:00Z`, flow: f, metadata: meta(`f-${date}`) });

  it('keeps one day without flow inside the period and starts a new cycle after two', async () => {
    const { records } = await parse(body(flow('2026-09-01', 3), flow('2026-09-03', 1), flow('2026-09-06'), flow('2026-09-07')));
    const cycles = records.filter((r) => r.kind === 'menstrual_cycle');
    expect(cycles).toMatchObject([
      { start_date: '2026-09-01', period_end_date: '2026-09-03', period_length_days: 3, cycle_length_days: 5, flow: { '2026-09-01': 'heavy', '2026-09-03': 'light' } },
      { start_date: '2026-09-06', period_end_date: '2026-09-07', period_length_days: 2, cycle_length_days: null },
    ]);
    // The flow days themselves are also stored as menstrual_flow category samples.
    expect(records.filter((r) => r.kind === 'category').map((r) => (r as { value: string }).value)).toEqual(['heavy', 'light', 'medium', 'medium']);
  });

  it('starts a cycle at a MenstruationPeriod start even right after flow days, and counts the period days as bleeding', async () => {
    const { records } = await parse(
      body(flow('2026-09-01'), { recordType: 'MenstruationPeriod', startTime: '2026-09-02T00:00:00Z', endTime: '2026-09-06T00:00:00Z', metadata: meta('period-1') }),
    );
    expect(records.filter((r) => r.kind === 'menstrual_cycle')).toMatchObject([
      { start_date: '2026-09-01', period_end_date: '2026-09-01', cycle_length_days: 1 },
      { start_date: '2026-09-02', period_end_date: '2026-09-05', period_length_days: 4, cycle_length_days: null, flow: {}, metadata: { record_ids: ['period-1'] } },
    ]);
  });
});

describe('device-b coverage of record types (docs/formats/device-b.md)', () => {
  it('documents every record type the parser reads', () => {
    const doc = readFileSync(new URL('../../../../docs/formats/device-b.md', import.meta.url), 'utf8');
    for (const t of HEALTH_CONNECT_RECORD_TYPES) expect(doc, t).toContain(`\`${t}\``);
  });
});

describe('device-b streaming: the body is read as a stream, memory bounded by the largest record (decodeStream.ts)', () => {
  const steps = (i: number, pkg = FIT) => ({
    recordType: 'Steps',
    startTime: new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString(),
    endTime: new Date(Date.UTC(2026, 10, 1) + (i + 1) * 60_000).toISOString(),
    count: 10 + (i % 7),
    metadata: { id: `big-${i}`, dataOrigin: { packageName: pkg }, recordingMethod: 2 },
  });

  it('parses a gzip body of 50,000 records completely and in order; a workout in the middle sums the records before and after it', async () => {
    const n = 50_000;
    const records: unknown[] = Array.from({ length: n }, (_, i) => steps(i));
    // Minutes 24,990 to 25,010 of the upload, i.e. the 20 Steps records on either side of it.
    const workout = { recordType: 'ExerciseSession', startTime: (records[24_990] as { startTime: string }).startTime, endTime: (records[25_009] as { endTime: string }).endTime, exerciseType: 79, metadata: meta('big-walk') };
    records.splice(25_000, 0, workout);
    const { records: out, rejected } = await parse(gzipSync(body(...records)));
    expect(rejected).toEqual([]);
    expect(out).toHaveLength(n + 1);
    expect(out.slice(0, n).map((r) => r.external_id)).toEqual(Array.from({ length: n }, (_, i) => `big-${i}`));
    let inside = 0;
    for (let i = 24_990; i < 25_010; i++) inside += 10 + (i % 7);
    expect(out[n]).toMatchObject({ kind: 'workout', external_id: 'big-walk', steps: inside });
  });

  /** A body with the awkward parts: multi-byte UTF-8 (2, 3 and 4 bytes), escapes, numbers, literals, nesting, a BOM. */
  const awkward = Buffer.concat([
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from(
      JSON.stringify({
        before: { nested: [1, [2, { deep: 'x' }]], s: 'ünïcödé' },
        records: [
          { ...steps(1), notes: 'Café au lait, 東京, 🏃‍♀️ \u00e9 "quoted" back\\slash\ttab' },
          { recordType: 'Weight', time: '2026-11-01T06:30:00.125+01:00', weight: { inPounds: 154.3e0 }, metadata: meta('w-1', { flags: [true, false, null], big: 1.5e300, neg: -0.25 }) },
          'not a record',
          [1, 2],
          null,
          { ...steps(2), metadata: meta('s-2', { emoji: '👩🏽‍💻' }) },
        ],
        after: '🙂',
      }).replace('"neg":-0.25', '"neg":-0.25e0 , "e":"\\ud83c\\udfc3"'),
    ),
  ]);

  function readAll(chunks: Buffer[]): BodyRecord[] {
    const reader = new RecordsReader();
    const out: BodyRecord[] = [];
    for (const c of chunks) out.push(...reader.write(c));
    out.push(...reader.end());
    return out;
  }

  it('hands over the same records whatever the chunk boundaries: split at every byte, and one byte at a time', () => {
    const whole = readAll([awkward]);
    const expected = (JSON.parse(awkward.subarray(3).toString('utf8')) as { records: unknown[] }).records;
    expect(whole.map((r) => r.record)).toEqual(expected);
    expect(whole.map((r) => r.index)).toEqual(expected.map((_, i) => i));
    for (let at = 1; at < awkward.length; at++) {
      const split = readAll([awkward.subarray(0, at), awkward.subarray(at)]);
      expect(split, `split at byte ${at}`).toEqual(whole);
    }
    expect(readAll([...awkward].map((b) => Buffer.from([b])))).toEqual(whole);
  });

  it('gives the parser the same items from the body plain, gzip, and re-chunked by gzip', async () => {
    const plain = await parse(awkward);
    expect(plain.records.map((r) => r.external_id)).toEqual(['big-1', 'w-1', 's-2']);
    expect(plain.rejected.map((r) => r.location)).toEqual(['record 3', 'record 4', 'record 5']);
    expect((await parse(gzipSync(awkward))).items).toEqual(plain.items);
  });

  it('stores nothing from a body whose JSON breaks after valid records: still ONE body item (the whole body is checked before any record is yielded)', async () => {
    const cut = FIXTURE.subarray(0, FIXTURE.length - 4);
    for (const payload of [cut, gzipSync(cut), Buffer.concat([FIXTURE, Buffer.from(' {')])]) {
      const { items } = await parse(payload);
      expect(items).toEqual([{ rejected: { location: 'body', reason: expect.stringMatching(/^body is not valid JSON/), excerpt: FIXTURE.subarray(0, 1024).toString('utf8') } }]);
    }
  });

  it('reads only the last "records" member, as JSON.parse does with duplicate keys, and refuses a "records" object', async () => {
    const dup = Buffer.from(`{"records":[${JSON.stringify(steps(1))}],"records":[${JSON.stringify(steps(2))}]}`);
    expect((await parse(dup)).records.map((r) => r.external_id)).toEqual(['big-2']);
    const { items } = await parse(Buffer.from(`{"records":{"a":${JSON.stringify(steps(1))}}}`));
    expect(items).toMatchObject([{ rejected: { location: 'body', reason: 'body is not an object with a "records" array' } }]);
  });

  it('stops inflating past the limit and refuses the body as a whole, as gunzipSync with maxOutputLength did', async () => {
    const gz = gzipSync(Buffer.alloc(4096, 0x20));
    const read = async (max: number) => {
      let n = 0;
      for await (const c of bodyChunks(gz, max)) n += c.length;
      return n;
    };
    expect(await read(4096)).toBe(4096);
    const err = await read(4095).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BodyError);
    expect(err).toMatchObject({ message: 'body is not valid gzip: it inflates to more than 4095 bytes', excerpt: gz.toString('base64') });
  });
  it('contracts §18 (issue 34): refuses as one body item a record nested too deep, a record of too many tokens, and another member too large to hold', async () => {
    const steps = '{"recordType":"Steps","startTime":"2026-11-01T00:00:00Z","endTime":"2026-11-01T00:10:00Z","count":10}';
    for (const [payload, reason] of [
      [`{"records":[${steps},{"x":${'['.repeat(100)}${']'.repeat(100)}}]}`, 'body is refused: values nested deeper than 64'],
      [`{"records":[${steps},{"x":[${'{},'.repeat(1_000_000)}{}]}]}`, 'body is refused: an element of more than 2000000 JSON tokens'],
      [`{"note":"${'n'.repeat(17 * 1024 * 1024)}","records":[${steps}]}`, 'body is refused: an element larger than 16777216 bytes'],
    ] as const) {
      const { items } = await parse(payload);
      expect(items.filter((i) => 'rejected' in i).map((i) => ('rejected' in i ? [i.rejected.location, i.rejected.reason] : null))).toEqual([['body', reason]]);
    }
  });

  it('reads and drops the parts of members other than records: a large one is no bound for the records', async () => {
    const steps = JSON.stringify({ recordType: 'Steps', startTime: '2026-11-01T00:00:00Z', endTime: '2026-11-01T00:10:00Z', count: 10, metadata: { id: 'steps-1', dataOrigin: { packageName: FIT } } });
    const { records, rejected } = await parse(`{"junk":[${'{"a":1},'.repeat(400_000)}{}],"records":[${steps}]}`);
    expect(rejected).toEqual([]);
    expect(records).toHaveLength(1);
  });
});
