import { describe, expect, it } from 'vitest';
import type { ParseContext } from '../../../../commands/ingestion/records.js';
import { zipEntries, type ZipInput } from '../../../fixtures/zip/buildZip.js';
import { bufferByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import { UnreadableExportError } from '../../../../src/sources/files/exportShared/unreadableExport.js';
import { fitbitTakeoutDecoder, fitbitTakeoutSniff } from '../../../../src/sources/files/fitbit-takeout/fitbitTakeoutDecoder.js';
import { weightUnit } from '../../../../src/sources/files/fitbit-takeout/decodeLogs.js';
import { countByKind, CTX, decodeAll, ofType } from '../decodeAll.js';

const G = 'Takeout/Fitbit/Global Export Data/';
const json = (name: string, value: unknown): ZipInput => ({ name, data: Buffer.from(JSON.stringify(value, null, 1)) });
const csv = (name: string, lines: string[]): ZipInput => ({ name, data: Buffer.from(lines.join('\n')) });
const profile = (tz: string) => csv('Takeout/Fitbit/Personal & Account/Profile.csv', ['id,full_name,timezone,locale', `ABC123,Someone,${tz},en_US`]);

/** A Takeout with both layouts; times chosen around a summer day in Berlin (UTC+2). */
function takeout(extra: ZipInput[] = []): ZipInput[] {
  return [
    profile('Europe/Berlin'),
    json(`${G}heart_rate-2024-07-01.json`, [
      { dateTime: '07/01/24 06:00:05', value: { bpm: 61, confidence: 2 } },
      { dateTime: '07/01/24 06:00:10', value: { bpm: 0, confidence: 0 } },
      { dateTime: '07/01/24 06:00:15', value: { bpm: 63, confidence: 3 } },
    ]),
    json(`${G}steps-2024-07-01.json`, [
      { dateTime: '07/01/24 08:00:00', value: '0' },
      { dateTime: '07/01/24 08:01:00', value: '95' },
      { dateTime: '07/01/24 08:02:00', value: 'many' },
    ]),
    json(`${G}distance-2024-07-01.json`, [{ dateTime: '07/01/24 08:01:00', value: '7125' }]),
    json(`${G}calories-2024-07-01.json`, [{ dateTime: '07/01/24 08:01:00', value: '4.2' }]),
    json(`${G}resting_heart_rate-2024-07-01.json`, [
      { dateTime: '07/01/24 00:00:00', value: { date: '07/01/24', value: 57.25, error: 4.1 } },
      { dateTime: '07/02/24 00:00:00', value: { date: null, value: 0.0, error: 0.0 } },
    ]),
    json(`${G}height-2015-05-17.json`, [{ dateTime: '05/18/15 00:00:00', value: '1800' }]),
    json(`${G}weight-2024-07-01.json`, [{ logId: 1719820800000, weight: 176.4, bmi: 24.69, date: '07/01/24', time: '07:30:00', source: 'Aria' }]),
    json(`${G}sleep-2024-07-01.json`, [
      {
        logId: 46000000001,
        dateOfSleep: '2024-07-01',
        startTime: '2024-06-30T23:00:00.000',
        endTime: '2024-07-01T07:00:00.000',
        duration: 28_800_000,
        minutesAsleep: 450,
        minutesAwake: 30,
        type: 'stages',
        logType: 'auto_detected',
        mainSleep: true,
        levels: {
          data: [
            { dateTime: '2024-06-30T23:00:00.000', level: 'light', seconds: 7200 },
            { dateTime: '2024-07-01T01:00:00.000', level: 'deep', seconds: 5400 },
            { dateTime: '2024-07-01T02:30:00.000', level: 'rem', seconds: 5400 },
            { dateTime: '2024-07-01T04:00:00.000', level: 'light', seconds: 10800 },
          ],
          shortData: [{ dateTime: '2024-07-01T05:00:00.000', level: 'wake', seconds: 120 }],
        },
      },
      { logId: 46000000002, startTime: 'yesterday', endTime: '2024-07-01T07:00:00.000' },
    ]),
    json(`${G}exercise-0.json`, [
      { logId: 77, activityName: 'Run', activityTypeId: 90009, startTime: '07/01/24 16:00:00', duration: 1_800_000, activeDuration: 1_740_000, calories: 350, distance: 5.2, distanceUnit: 'Kilometer', averageHeartRate: 151, steps: 5200, logType: 'tracker', source: { type: 'tracker', name: 'Pixel Watch 2' } },
    ]),
    csv('Takeout/Fitbit/Heart Rate Variability/Daily Heart Rate Variability Summary - 2024-07-01.csv', ['timestamp,rmssd,nremhr,entropy', '2024-07-01T00:00:00,38.5,55.1,2.9']),
    csv('Takeout/Fitbit/Oxygen Saturation (SpO2)/Daily SpO2 - 2024-07-01-2024-07-31.csv', ['timestamp,average_value,lower_bound,upper_bound', '2024-07-01T00:00:00Z,95.8,93.0,99.9', '2024-07-02T00:00:00Z,105,93.0,99.9']),
    csv('Takeout/Fitbit/Sleep Score/sleep_score.csv', ['sleep_log_entry_id,timestamp,overall_score,composition_score,revitalization_score,duration_score,deep_sleep_in_minutes,resting_heart_rate,restlessness', '46000000001,2024-07-01T07:00:00Z,84,21,20,43,90,57,0.07']),
    csv('Takeout/Fitbit/Daily Readiness/Daily Readiness Score - 2024-07-01.csv', ['date,readiness_score_value,readiness_state', '2024-07-01,77.0,HIGH']),
    csv('Takeout/Fitbit/Heart Rate Variability/Daily Respiratory Rate Summary - 2024-07-01.csv', ['timestamp,daily_respiratory_rate', '2024-07-01T00:00:00,14.8']),
    csv('Takeout/Fitbit/Temperature/Computed Temperature - 2024-07-01.csv', ['type,sleep_start,sleep_end,temperature_samples,nightly_temperature', 'IDT,2024-06-30T23:00,2024-07-01T07:00:30,470,33.6']),
    csv('Takeout/Fitbit/Active Zone Minutes (AZM)/Active Zone Minutes - 2024-07-01.csv', ['date_time,heart_zone_id,total_minutes', '2024-07-01T16:05,CARDIO,2']),
    ...extra,
  ];
}

const decode = async (entries: ZipInput[], ctx: ParseContext = CTX) => decodeAll(fitbitTakeoutDecoder, bufferByteSource(await zipEntries(entries)), ctx);
const iso = (s: string) => new Date(s).toISOString();

describe('fitbit-takeout decoder (contracts §13, issue 21)', () => {
  it('imports every kind of both layouts, leaving out what has no home', async () => {
    const { records } = await decode(takeout());
    expect(countByKind(records)).toEqual({
      'quantity:heart_rate': 2,
      'quantity:step_count': 1,
      'quantity:distance': 1,
      'quantity:total_energy_burned': 1,
      'quantity:resting_heart_rate': 1,
      'quantity:height': 1,
      'quantity:body_mass': 1,
      'quantity:body_mass_index': 1,
      sleep_session: 1,
      workout: 1,
      'quantity:hrv_rmssd': 1,
      'quantity:oxygen_saturation': 1,
      'quantity:sleep_score': 1,
      'quantity:readiness_score': 1,
      'quantity:respiratory_rate': 1,
      'quantity:sleeping_wrist_temperature': 1,
    });
  });

  it('rejects what cannot be read with the entry and the element index or CSV line', async () => {
    const { rejected } = await decode(takeout());
    expect(rejected.map((r) => [r.location, r.reason])).toEqual([
      [`${G}heart_rate-2024-07-01.json:[1]`, 'value.bpm 0 is not a heart rate'],
      [`${G}steps-2024-07-01.json:[2]`, 'value "many" is not a number'],
      [`${G}sleep-2024-07-01.json:[1]`, 'startTime "yesterday" is not a local date-time'],
      ['Takeout/Fitbit/Oxygen Saturation (SpO2)/Daily SpO2 - 2024-07-01-2024-07-31.csv:3', 'average_value 105 is out of range'],
    ]);
  });

  it('reads heart rate and exercise start times as UTC, the other files in the profile’s zone (docs "Times")', async () => {
    const { records } = await decode(takeout());
    const hr = ofType(records, 'quantity', 'heart_rate')[0]!;
    expect(hr).toMatchObject({ start_date: iso('2024-07-01T06:00:05Z'), end_date: iso('2024-07-01T06:00:05Z'), value: 61, external_id: 'heart_rate:2024-07-01T06:00:05.000Z' });
    expect(hr.metadata).toMatchObject({ timezone: 'Europe/Berlin', utc_offset: '+02:00', timezone_source: 'profile', confidence: 2 });
    expect(ofType(records, 'quantity', 'step_count')[0]).toMatchObject({ value: 95, start_date: iso('2024-07-01T06:01:00Z'), end_date: iso('2024-07-01T06:02:00Z') });
    expect(ofType(records, 'quantity', 'distance')[0]).toMatchObject({ value: 71.25, unit: 'm' });
    expect(ofType(records, 'workout')[0]).toMatchObject({ type: 'running', start_date: iso('2024-07-01T16:00:00Z'), end_date: iso('2024-07-01T16:30:00Z'), duration_s: 1740, distance_m: 5200, device: 'Pixel Watch 2', body_worn: true, external_id: 'activity:77' });
    expect(ofType(records, 'quantity', 'resting_heart_rate')[0]).toMatchObject({ value: 57.25, start_date: iso('2024-06-30T22:00:00Z'), end_date: iso('2024-07-01T22:00:00Z'), external_id: 'resting_heart_rate:2024-07-01' });
    expect(ofType(records, 'quantity', 'hrv_rmssd')[0]).toMatchObject({ value: 38.5, start_date: iso('2024-06-30T22:00:00Z') });
    expect(ofType(records, 'quantity', 'oxygen_saturation')[0]).toMatchObject({ value: 95.8, start_date: iso('2024-06-30T22:00:00Z'), external_id: 'oxygen_saturation:2024-07-01' });
    expect(ofType(records, 'quantity', 'sleeping_wrist_temperature')[0]).toMatchObject({ value: 33.6, start_date: iso('2024-06-30T21:00:00Z'), end_date: iso('2024-07-01T05:00:30Z') });
  });

  it('joins the night’s sleep score to its sleep log, overlays short wakes, and keeps the score as a sample at wake time', async () => {
    const { records } = await decode(takeout());
    const night = ofType(records, 'sleep_session')[0]!;
    expect(night).toMatchObject({ external_id: 'sleep:46000000001', provider: 'test-import', bedtime_start: iso('2024-06-30T21:00:00Z'), bedtime_end: iso('2024-07-01T05:00:00Z'), sleep_score: 84, deep_sleep_seconds: 5400, rem_sleep_seconds: 5400, awake_seconds: 120 });
    expect(night.phases.map((p) => p.phase)).toEqual(['light', 'deep', 'rem', 'light', 'awake', 'light']);
    expect(night.metadata).toMatchObject({ timezone_source: 'profile', is_main_sleep: true });
    expect(ofType(records, 'quantity', 'sleep_score')[0]).toMatchObject({ value: 84, start_date: iso('2024-07-01T05:00:00Z'), external_id: 'sleep_score:46000000001' });
  });

  it('reads weight logs in pounds or kilograms from their BMI and the export’s height', async () => {
    const { records } = await decode(takeout());
    expect(ofType(records, 'quantity', 'body_mass')[0]).toMatchObject({ value: 80.013694068, unit: 'kg', device: 'Aria', body_worn: false, was_user_entered: false, start_date: iso('2024-07-01T05:30:00Z') });
    expect(ofType(records, 'quantity', 'body_mass')[0]!.metadata).toMatchObject({ weight_unit: 'lb', weight_unit_basis: 'bmi_and_height', original_weight: 176.4 });
    expect(weightUnit(80, 24.69, 1.8)).toEqual({ unit: 'kg', basis: 'bmi_and_height' });
    expect(weightUnit(70, 25, null)).toEqual({ unit: 'kg', basis: 'bmi' });
    expect(weightUnit(211.8, 29.33, null)).toEqual({ unit: 'lb', basis: 'bmi' });
    expect(weightUnit(100, 30, null).basis).toBe('assumed (BMI fits both units)');
    expect(weightUnit(100, null, null).basis).toBe('assumed (no BMI in the log)');
  });

  it('takes the zone the upload names over the profile’s, and UTC, flagged, when neither names one', async () => {
    const upload = await decode(takeout(), { ...CTX, timeZone: 'America/New_York' } as ParseContext);
    expect(ofType(upload.records, 'quantity', 'step_count')[0]).toMatchObject({ start_date: iso('2024-07-01T12:01:00Z') });
    expect(ofType(upload.records, 'quantity', 'step_count')[0]!.metadata).toMatchObject({ timezone: 'America/New_York', utc_offset: '-04:00', timezone_source: 'upload' });
    const none = await decode(takeout().filter((e) => !e.name.endsWith('Profile.csv')));
    expect(ofType(none.records, 'quantity', 'step_count')[0]).toMatchObject({ start_date: iso('2024-07-01T08:01:00Z') });
    expect(ofType(none.records, 'quantity', 'step_count')[0]!.metadata).toMatchObject({ timezone: '+00:00', timezone_source: 'assumed_utc' });
    await expect(decode(takeout(), { ...CTX, timeZone: 'Mars/Olympus' } as ParseContext)).rejects.toThrow(/"Mars\/Olympus", is not an IANA time zone/);
  });

  it('keeps the elements before a break in a file and rejects the rest with the index it broke at', async () => {
    const cut = JSON.stringify([{ dateTime: '07/02/24 06:00:05', value: { bpm: 70, confidence: 2 } }, { dateTime: '07/02/24 06:00:10', value: { bpm: 71 } }]).slice(0, -20);
    const { records, rejected } = await decode([profile('UTC'), { name: `${G}heart_rate-2024-07-02.json`, data: Buffer.from(cut) }]);
    expect(ofType(records, 'quantity', 'heart_rate').map((r) => r.value)).toEqual([70]);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.location).toBe(`${G}heart_rate-2024-07-02.json:[1]`);
    expect(rejected[0]!.reason).toMatch(/^the rest of the file cannot be read: invalid JSON/);
  });

  it('gives the same items with the same ids every time, and skips the placeholder days Fitbit writes as 0', async () => {
    const entries = takeout();
    const a = await decode(entries);
    const b = await decode(entries);
    expect(b.items).toEqual(a.items);
    expect(ofType(a.records, 'quantity', 'resting_heart_rate')).toHaveLength(1);
    expect(new Set(a.records.map((r) => `${r.kind}:${r.external_id}`)).size).toBe(a.records.length);
  });

  it('refuses what is not a zip at the request and a zip without Fitbit files at decode time', async () => {
    expect(fitbitTakeoutSniff(Buffer.from('[{"dateTime":'))).toMatch(/^not a zip archive .*: expected a Google Takeout zip of Fitbit data$/);
    await expect(decode([{ name: 'Takeout/Mail/All mail.mbox', data: Buffer.from('From x') }])).rejects.toThrow(UnreadableExportError);
    await expect(decode([{ name: 'Takeout/Mail/All mail.mbox', data: Buffer.from('From x') }])).rejects.toThrow(/^not a Fitbit export: the archive holds none of Fitbit's files .*it holds Takeout\/Mail\/All mail\.mbox$/);
    // A Fitbit export holding only files with no home in the catalog is a Fitbit export with nothing to import.
    expect((await decode([csv('Takeout/Fitbit/Stress Score/Stress Score.csv', ['DATE,STRESS_SCORE'])])).items).toEqual([]);
  });
  it('contracts §18 (issue 34): an 8 MB CSV line ends its file with one rejection naming it; the rest of the export imports', async () => {
    const spo2 = 'Takeout/Fitbit/Oxygen Saturation (SpO2)/Daily SpO2 - 2024-07-01-2024-07-31.csv';
    const entries = takeout().filter((e) => e.name !== spo2);
    entries.push(csv(spo2, ['timestamp,average_value,lower_bound,upper_bound', '2024-07-01T00:00:00Z,95.8,93.0,99.9', `2024-07-02T00:00:00Z,${'9'.repeat(8 * 1024 * 1024)},93.0,99.9`, '2024-07-03T00:00:00Z,96.1,93.0,99.9']));
    // Decoded here, in this process: today's reader held hundreds of megabytes for this line.
    const { records, rejected } = await decode(entries);
    expect(rejected.filter((r) => r.location.startsWith(spo2)).map((r) => [r.location, r.reason])).toEqual([[`${spo2}:3`, 'a record longer than 1048576 bytes starts at line 3: the rest of the file is not read']]);
    expect(ofType(records, 'quantity', 'oxygen_saturation').map((r) => r.value)).toEqual([95.8]);
    expect(ofType(records, 'quantity', 'heart_rate').length).toBeGreaterThan(0);
    expect(ofType(records, 'workout').length + ofType(records, 'sleep_session').length).toBeGreaterThan(0);
  });
});
