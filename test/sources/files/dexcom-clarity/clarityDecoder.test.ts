import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ParseContext } from '../../../../commands/ingestion/records.js';
import { bufferByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import type { ImportContext } from '../../../../src/sources/files/exportShared/importContext.js';
import { UnreadableExportError } from '../../../../src/sources/files/exportShared/unreadableExport.js';
import { claritySniff } from '../../../../src/sources/files/dexcom-clarity/clarityColumns.js';
import { dexcomClarityDecoder } from '../../../../src/sources/files/dexcom-clarity/clarityDecoder.js';
import { countByKind, CTX, decodeAll, ofType } from '../decodeAll.js';
import { realdataPath } from '../realdata.js';

/**
 * contracts §17, dexcom-clarity: EGV rows become blood_glucose in the unit sent (value and unit
 * kept in metadata), calibrations are marked, carbs are dietary_carbohydrates, other events
 * decode to nothing; the patient rows reach nothing; local times are read in the uploader's zone,
 * else UTC, and every record says which. docs/formats/dexcom-clarity.md.
 */

const HEADER = 'Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info,Device Info,Source Device ID,Glucose Value (UNIT),Insulin Value (u),Carb Value (grams),Duration (hh:mm:ss),Glucose Rate of Change (UNIT/min),Transmitter Time (Long Integer),Transmitter ID';
const PATIENT = ['1,,FirstName,,Jane,,,,,,,,,', '2,,LastName,,Doe-Secret,,,,,,,,,', '3,,DateOfBirth,,1971-02-03,,,,,,,,,', '4,,Device,,,Dexcom G7 Mobile App,iOS G7,,,,,,,', '5,,Alert,High,,,iOS G7,250,,,,,,'];
function clarity(rows: string[], unit = 'mg/dL'): Buffer {
  return Buffer.from(['\uFEFF' + HEADER.replaceAll('UNIT', unit), ...PATIENT, ...rows].join('\r\n') + '\r\n');
}
const decode = (body: Buffer, ctx: ParseContext = CTX) => decodeAll(dexcomClarityDecoder, bufferByteSource(body), ctx);
const berlin = { ...CTX, timeZone: 'Europe/Berlin' } as ImportContext;

describe('dexcom-clarity decoder (contracts §17)', () => {
  it('an EGV in mg/dL: blood_glucose at the local time read in the uploader’s zone, value and unit as sent in metadata, the app and sensor as device', async () => {
    const { records, rejected } = await decode(clarity(['6,2024-06-06T08:00:41,EGV,,,,iOS G7,128,,,,1.5,572912,7Xsecret99']), berlin);
    expect(rejected).toEqual([]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      kind: 'quantity',
      type: 'blood_glucose',
      value: 128,
      unit: 'mg/dL',
      provider: 'test-import',
      source: 'dexcom',
      device: 'Dexcom G7 Mobile App (iOS G7)',
      body_worn: true,
      was_user_entered: false,
      start_date: '2024-06-06T06:00:41.000Z',
      end_date: '2024-06-06T06:00:41.000Z',
      external_id: 'egv:2024-06-06T08:00:41:572912',
    });
    expect(records[0]!.metadata).toMatchObject({ original_value: 128, original_unit: 'mg/dL', record_type: 'egv', timezone: 'Europe/Berlin', utc_offset: '+02:00', timezone_source: 'upload', transmitter_time: 572912, rate_of_change: 1.5, rate_of_change_unit: 'mg/dL/min' });
  });

  it('the patient rows and the transmitter serial reach no record and no rejection', async () => {
    const { items } = await decode(clarity(['6,2024-06-06T08:00:41,EGV,,,,iOS G7,128,,,,,572912,7Xsecret99', '7,2024-06-06T08:05:41,EGV,,,,iOS G7,High,,,,,573212,7Xsecret99']));
    const text = JSON.stringify(items);
    for (const secret of ['Jane', 'Doe-Secret', '1971-02-03', '7Xsecret99']) expect(text).not.toContain(secret);
  });

  it('mmol/L as sent: stored in the catalog unit (mg/dL), the mmol/L value and unit kept in metadata', async () => {
    const { records } = await decode(clarity(['6,2024-06-06 08:00:41,EGV,,,,iOS G7,7.1,,,,,,'], 'mmol/L'));
    expect(records[0]).toMatchObject({ type: 'blood_glucose', unit: 'mg/dL' });
    expect((records[0] as { value: number }).value).toBeCloseTo(7.1 * 18.0156, 1);
    expect(records[0]!.metadata).toMatchObject({ original_value: 7.1, original_unit: 'mmol/L', timezone_source: 'assumed_utc', timezone: '+00:00' });
    expect(records[0]).toMatchObject({ start_date: '2024-06-06T08:00:41.000Z', external_id: 'egv:2024-06-06T08:00:41' });
  });

  it('"Low" and "High" EGVs are rejected with the reason, no number invented', async () => {
    const { records, rejected } = await decode(clarity(['6,2024-06-06T08:00:41,EGV,Low,,,iOS G7,Low,,,,,1,', '7,2024-06-06T08:05:41,EGV,High,,,iOS G7,High,,,,,2,']));
    expect(records).toEqual([]);
    expect(rejected.map((r) => [r.location, r.reason])).toEqual([
      ['line 7', expect.stringMatching(/^EGV "Low": below the sensor's reporting range .*no number was measured, so none is stored$/)],
      ['line 8', expect.stringMatching(/^EGV "High": above the sensor's reporting range/)],
    ]);
  });

  it('calibrations are user-entered blood_glucose marked calibration; carbs dietary_carbohydrates; insulin insulin_delivery with its subtype; exercise, health and alerts decode to nothing', async () => {
    const { records, rejected } = await decode(
      clarity([
        '6,2024-06-06T08:00:00,Calibration,,,,iOS G7,110,,,,,,',
        '7,2024-06-06T08:10:00,Carbs,,,,iOS G7,,,45,,,,',
        '8,2024-06-06T08:11:00,Insulin,Fast-Acting,,,iOS G7,,4.5,,,,,',
        '9,2024-06-06T09:00:00,Exercise,Medium,,,iOS G7,,,,00:30:00,,,',
        '10,2024-06-06T09:30:00,Health,Illness,,,iOS G7,,,,,,,',
      ]),
    );
    expect(rejected).toEqual([]);
    expect(countByKind(records)).toEqual({ 'quantity:blood_glucose': 1, 'quantity:dietary_carbohydrates': 1, 'quantity:insulin_delivery': 1 });
    expect(ofType(records, 'quantity', 'blood_glucose')[0]).toMatchObject({ value: 110, was_user_entered: true, body_worn: false, metadata: { record_type: 'calibration' } });
    expect(ofType(records, 'quantity', 'dietary_carbohydrates')[0]).toMatchObject({ value: 45, unit: 'g', was_user_entered: true });
    expect(ofType(records, 'quantity', 'insulin_delivery')[0]).toMatchObject({ value: 4.5, unit: 'IU', metadata: { event_subtype: 'Fast-Acting' } });
  });

  it('a row cut short by the end of the file is rejected whole, not read as a cut number', async () => {
    const body = clarity(['6,2024-06-06T08:00:41,EGV,,,,iOS G7,128,,,,,572912,7X', '7,2024-06-06T08:05:41,EGV,,,,iOS G7,12']);
    const { records, rejected } = await decode(body.subarray(0, body.length - 2));
    expect(records).toHaveLength(1);
    expect(rejected).toEqual([{ location: 'line 8', reason: "the row has 8 of the header's 14 columns (the file may be cut inside it)", excerpt: expect.any(String) }]);
  });

  it('a bad timestamp or number is rejected with its line and reason', async () => {
    const { rejected } = await decode(clarity(['6,yesterday,EGV,,,,iOS G7,128,,,,,1,', '7,2024-06-06T08:05:41,EGV,,,,iOS G7,lots,,,,,2,']));
    expect(rejected.map((r) => r.location)).toEqual(['line 7', 'line 8']);
    expect(rejected[0]!.reason).toMatch(/Timestamp "yesterday" is not an ISO date/);
    expect(rejected[1]!.reason).toMatch(/Glucose Value "lots" is not a number/);
  });

  it('a header without the glucose column, or with a unit it does not read, fails the upload with the reason', async () => {
    await expect(decode(Buffer.from('Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type\n1,2024-01-01T00:00:00,EGV\n'))).rejects.toThrow(UnreadableExportError);
    await expect(decode(Buffer.from('Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type\n'))).rejects.toThrow(/its header row lacks Glucose Value/);
    await expect(decode(clarity([], 'g/L'))).rejects.toThrow(/names no unit this import reads/);
  });

  it('sniff: the header row passes, quoted or not; anything else is refused with what it lacks', () => {
    expect(claritySniff(clarity([]))).toBeNull();
    expect(claritySniff(Buffer.from('"Index","Timestamp (YYYY-MM-DDThh:mm:ss)","Event Type","Glucose Value (mg/dL)"\n'))).toBeNull();
    expect(claritySniff(Buffer.from('PK\u0003\u0004garbage'))).toMatch(/not the header row of a Dexcom Clarity CSV export.*lacks "Timestamp", "Event Type", "Glucose Value"/);
    expect(claritySniff(Buffer.from('date,steps\n2024-01-01,5\n'))).not.toBeNull();
  });
});

describe('dexcom-clarity on the real exports (../shared/realdata/cgm/dexcom)', () => {
  for (const file of ['example_export_data.csv', 'Dexcom_001.csv']) {
    const path = realdataPath('cgm', 'dexcom', file);
    it.skipIf(!path)(`${file}: one blood_glucose per numeric EGV row, each Low/High row rejected, values and unit read back`, async () => {
      const body = readFileSync(path!);
      // The file's own counts, by a plain reading of its lines (no quoted cell holds a comma or newline in these files).
      const rows = body.toString('utf8').split(/\r?\n/).slice(1).filter(Boolean).map((l) => l.split(',').map((c) => c.replace(/^"|"$/g, '')));
      const egvs = rows.filter((r) => r[2] === 'EGV');
      const numeric = egvs.filter((r) => /^\d+(\.\d+)?$/.test(r[7]!));
      const { records, rejected } = await decode(body, berlin);
      const glucose = ofType(records, 'quantity', 'blood_glucose');
      expect(glucose).toHaveLength(numeric.length);
      expect(rejected).toHaveLength(egvs.length - numeric.length);
      expect(new Set(glucose.map((r) => r.external_id)).size).toBe(glucose.length);
      for (const [i, r] of glucose.entries()) {
        expect(r.metadata.original_value).toBe(Number(numeric[i]![7]));
        expect(r.metadata).toMatchObject({ original_unit: 'mg/dL', timezone_source: 'upload', record_type: 'egv' });
      }
      console.log(`${file}: ${egvs.length} EGV rows, ${glucose.length} blood_glucose, ${rejected.length} rejected (${[...new Set(rejected.map((r) => r.reason.slice(0, 40)))].join('; ')}); device ${glucose[0]!.device}`);
    });
  }
});
