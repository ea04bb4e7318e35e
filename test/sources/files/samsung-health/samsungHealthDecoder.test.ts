import { describe, expect, it } from 'vitest';
import { zipEntries, type ZipInput } from '../../../fixtures/zip/buildZip.js';
import { bufferByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import { samsungHealthDecoder, samsungHealthSniff } from '../../../../src/sources/files/samsung-health/samsungHealthDecoder.js';
import { countByKind, decodeAll, ofType } from '../decodeAll.js';
import { FOLDER, samsungCsv } from './samsungExport.js';

const SH = 'com.sec.android.app.shealth';
const HR = 'com.samsung.health.heart_rate.';
const T = (s: string) => `2024-03-10 ${s}.000`;

function heartRate(): ZipInput {
  return samsungCsv(
    'com.samsung.shealth.tracker.heart_rate',
    ['*tag_id', 'heart_rate', 'min', 'max', 'start_time', 'end_time', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'],
    [
      [21313, 72, 70, 75, T('06:00:00'), T('06:00:30'), 'UTC+0100', 'watch-1', SH, 'hr-1'],
      [21313, 'abc', 70, 75, T('06:01:00'), T('06:01:30'), 'UTC+0100', 'watch-1', SH, 'hr-2'],
      [21313, 80, 78, 84, T('06:02:00'), T('06:02:30'), 'UTC+0100', 'phone-1', SH, 'hr-3'],
    ],
    { prefix: HR },
  );
}

function weight(): ZipInput {
  return samsungCsv('com.samsung.health.weight', ['weight', 'body_fat', 'fat_free_mass', 'basal_metabolic_rate', 'height', 'start_time', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], [
    [72.4, 21.5, 56.8, 1620, 178, T('07:00:00'), 'UTC+0100', 'scale-1', SH, 'w-1'],
    [72.1, null, null, null, 178, '2024-03-11 07:00:00.000', 'UTC+0100', 'scale-1', SH, 'w-2'],
  ]);
}

function steps(): ZipInput[] {
  const day = (d: string) => Date.parse(`${d}T00:00:00Z`);
  return [
    samsungCsv('com.samsung.shealth.step_daily_trend', ['day_time', 'count', 'distance', 'calorie', 'source_type', 'deviceuuid', 'pkg_name', 'datauuid'], [
      [day('2024-03-10'), 6000, 4200.5, 210, 0, 'phone-1', SH, 'd-1'],
      [day('2024-03-10'), 8200, 5900, 290, -2, 'all', SH, 'd-2'],
      [day('2024-03-10'), 7000, 5000, 250, 25, 'watch-1', SH, 'd-3'],
      [day('2024-03-11'), 3000, 2100, 100, 0, 'phone-1', SH, 'd-4'],
      [day('2024-03-11'), 4100, 2900, 140, 25, 'watch-1', SH, 'd-5'],
      [day('2024-03-10'), 8200, 5900, 290, -2, 'all', SH, 'd-6'],
      ['yesterday', 1, 1, 1, -2, 'all', SH, 'd-7'],
    ]),
  ];
}

const SLEEP = 'com.samsung.health.sleep.';
function sleep(sessions = 2): ZipInput[] {
  const rows: (string | number | null)[][] = [];
  const stages: (string | number | null)[][] = [];
  for (let i = 0; i < sessions; i++) {
    const start = Date.UTC(2020, 0, 1, 22) + i * 86_400_000;
    const t = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
    rows.push([i === 0 ? 81 : null, 90, 420, t(start), t(start + 8 * 3_600_000), 'UTC-0300', 'watch-1', SH, `s-${i}`]);
    stages.push([t(start), t(start + 3 * 3_600_000), 40002, `s-${i}`, 'UTC-0300', 'watch-1', SH, `st-${i}-a`]);
    stages.push([t(start + 3 * 3_600_000), t(start + 9 * 3_600_000), 40003, `s-${i}`, 'UTC-0300', 'watch-1', SH, `st-${i}-b`]);
  }
  stages.push(['2020-01-01 23:00:00.000', '2020-01-01 23:30:00.000', 40099, 's-0', 'UTC-0300', 'watch-1', SH, 'st-bad']);
  stages.push(['2020-01-01 23:00:00.000', '2020-01-01 23:30:00.000', 40001, 'nobody', 'UTC-0300', 'watch-1', SH, 'st-orphan']);
  return [
    samsungCsv('com.samsung.shealth.sleep', ['*sleep_score', '*efficiency', '*sleep_duration', 'start_time', 'end_time', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], rows, { prefix: SLEEP }),
    samsungCsv('com.samsung.health.sleep_stage', ['start_time', 'end_time', 'stage', 'sleep_id', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], stages),
  ];
}

function exercise(): ZipInput {
  const E = 'com.samsung.health.exercise.';
  return samsungCsv('com.samsung.shealth.exercise', ['*title', 'exercise_type', 'start_time', 'end_time', 'duration', 'calorie', 'distance', 'mean_heart_rate', 'max_heart_rate', 'count', 'count_type', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], [
    [null, 1002, T('17:00:00'), T('17:40:00'), 2_280_000, 410.5, 6100, 152, 171, 5900, 30001, 'UTC+0100', 'watch-1', SH, 'ex-1'],
    ['Climbing gym', 0, T('19:00:00'), T('20:00:00'), 3_600_000, 300, 0, 0, 0, null, null, 'UTC+0100', 'phone-1', SH, 'ex-2'],
  ], { prefix: E });
}

function devices(): ZipInput {
  return samsungCsv('com.samsung.health.device_profile', ['*deviceuuid', '*name', '*model', '*device_group'], [
    ['watch-1', 'Galaxy Watch6', 'SM-R940', 360003],
    ['phone-1', 'Galaxy S23', 'SM-S911B', 360001],
  ]);
}

const decode = async (entries: ZipInput[]) => decodeAll(samsungHealthDecoder, bufferByteSource(await zipEntries(entries)));
const iso = (s: string) => new Date(s).toISOString();

describe('samsung-health decoder (contracts §13, issue 21)', () => {
  it('reads heart rate with its UTC times and offset, the device from the device profile, and rejects a bad row at its line', async () => {
    const { records, rejected } = await decode([devices(), heartRate()]);
    const hr = ofType(records, 'quantity', 'heart_rate');
    expect(hr.map((r) => [r.external_id, r.value, r.start_date, r.end_date, r.device, r.body_worn, r.source])).toEqual([
      ['hr-1', 72, iso('2024-03-10T06:00:00Z'), iso('2024-03-10T06:00:30Z'), 'Galaxy Watch6', true, 'samsung'],
      ['hr-3', 80, iso('2024-03-10T06:02:00Z'), iso('2024-03-10T06:02:30Z'), 'Galaxy S23', false, 'samsung'],
    ]);
    expect(hr[0]!.metadata).toMatchObject({ timezone: '+01:00', min: 70, max: 75, tag_id: 21313, data_type: 'com.samsung.shealth.tracker.heart_rate' });
    expect(rejected.map((r) => [r.location, r.reason])).toEqual([[`${FOLDER}com.samsung.shealth.tracker.heart_rate.20250101120000.csv:4`, 'heart_rate "abc" is not a number']]);
  });

  it('gives a weigh-in one sample per measured value, ids <datauuid>:<type>', async () => {
    const { records } = await decode([weight()]);
    expect(countByKind(records)).toEqual({ 'quantity:body_mass': 2, 'quantity:body_fat_percentage': 1, 'quantity:lean_body_mass': 1, 'quantity:basal_metabolic_rate': 1 });
    expect(ofType(records, 'quantity', 'body_fat_percentage')[0]).toMatchObject({ external_id: 'w-1:body_fat_percentage', value: 21.5, start_date: iso('2024-03-10T07:00:00Z') });
    expect(ofType(records, 'quantity', 'body_mass')[0]!.metadata).toMatchObject({ height: 178 });
  });

  it('keeps one step total a day: the combined row, else the device with the most steps', async () => {
    const { records, rejected } = await decode(steps());
    expect(ofType(records, 'daily_summary').map((r) => [r.date, r.steps, r.distance_m, r.external_id])).toEqual([
      ['2024-03-10', 8200, 5900, 'steps_daily:2024-03-10'],
      ['2024-03-11', 4100, 2900, 'steps_daily:2024-03-11'],
    ]);
    expect(rejected.map((r) => r.reason)).toEqual(['day_time "yesterday" is not a number']);
  });

  it('joins sleep stages to their sessions in batches, reporting bad and orphan stages once', async () => {
    const { records, rejected } = await decode(sleep(4_500));
    const sessions = ofType(records, 'sleep_session');
    expect(sessions).toHaveLength(4_500);
    expect(sessions.every((s) => s.phases.length === 2 && s.light_sleep_seconds === 3 * 3600 && s.deep_sleep_seconds === 5 * 3600)).toBe(true);
    expect(sessions[0]).toMatchObject({ external_id: 's-0', bedtime_start: iso('2020-01-01T22:00:00Z'), bedtime_end: iso('2020-01-02T06:00:00Z'), total_sleep_seconds: 8 * 3600, sleep_score: 81 });
    // The deep stage reaches past its session's end: it is cut to the session.
    expect(sessions[1]!.phases[1]).toEqual({ phase: 'deep', start_date: iso('2020-01-03T01:00:00Z'), end_date: iso('2020-01-03T06:00:00Z') });
    expect(ofType(records, 'quantity', 'sleep_score').map((r) => [r.external_id, r.value, r.start_date])).toEqual([['s-0:sleep_score', 81, iso('2020-01-02T06:00:00Z')]]);
    expect(rejected.map((r) => r.reason)).toEqual(['sleep stage: stage "40099" is not a known sleep stage', 'sleep stage: sleep_id nobody names no sleep session of the export']);
    expect(rejected.map((r) => r.location)).toEqual([`${FOLDER}com.samsung.health.sleep_stage.20250101120000.csv:9003`, `${FOLDER}com.samsung.health.sleep_stage.20250101120000.csv:9004`]);
  });

  it('maps exercise types from the SDK’s codes and steps from stride counts', async () => {
    const { records } = await decode([devices(), exercise()]);
    const [run, custom] = ofType(records, 'workout');
    expect(run).toMatchObject({ external_id: 'ex-1', type: 'running', duration_s: 2280, active_energy_kcal: 410.5, distance_m: 6100, avg_heart_rate: 152, max_heart_rate: 171, steps: 5900, device: 'Galaxy Watch6', body_worn: true });
    expect(custom).toMatchObject({ type: 'other', distance_m: null, avg_heart_rate: null, steps: null });
    expect(custom!.metadata).toMatchObject({ exercise_type: 0, exercise_type_name: 'Custom', title: 'Climbing gym' });
  });

  it('reads a file re-saved without its metadata line', async () => {
    const bare = samsungCsv('com.samsung.shealth.tracker.oxygen_saturation', ['spo2', 'start_time', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], [[97, T('03:00:00'), 'UTC+0100', 'watch-1', SH, 'o-1']], { metadataLine: false });
    expect(ofType((await decode([bare])).records, 'quantity', 'oxygen_saturation').map((r) => r.value)).toEqual([97]);
  });

  it('gives the same items with the same ids every time', async () => {
    const entries = [devices(), heartRate(), weight(), ...steps(), ...sleep(3), exercise()];
    const a = await decode(entries);
    expect((await decode(entries)).items).toEqual(a.items);
    expect(new Set(a.records.map((r) => `${r.kind}:${r.external_id}`)).size).toBe(a.records.length);
  });

  it('refuses what is not a zip at the request and a zip without Samsung Health files at decode time', async () => {
    expect(samsungHealthSniff(Buffer.from('com.samsung.health.weight,6233003,10\n'))).toMatch(/^not a zip archive/);
    await expect(decode([{ name: 'notes.txt', data: Buffer.from('x') }])).rejects.toThrow(/^not a Samsung Health export: the archive holds no com\.samsung\.\*\.csv data file; it holds notes\.txt$/);
  });
  it('contracts §18 (issue 34): an 8 MB CSV line ends its file with one rejection naming it; the rest of the export imports', async () => {
    const long = samsungCsv('com.samsung.shealth.tracker.heart_rate', ['*tag_id', 'heart_rate', 'start_time', 'end_time', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], [
      [21313, 72, T('06:00:00'), T('06:00:30'), 'UTC+0100', 'watch-1', SH, 'hr-1'],
      [21313, 'x'.repeat(8 * 1024 * 1024), T('06:01:00'), T('06:01:30'), 'UTC+0100', 'watch-1', SH, 'hr-2'],
      [21313, 80, T('06:02:00'), T('06:02:30'), 'UTC+0100', 'watch-1', SH, 'hr-3'],
    ], { prefix: HR });
    // Decoded here, in this process: today's reader held hundreds of megabytes for this line.
    const { records, rejected } = await decode([devices(), long, weight()]);
    expect(rejected.map((r) => [r.location, r.reason])).toEqual([[`${FOLDER}com.samsung.shealth.tracker.heart_rate.20250101120000.csv:4`, 'a record longer than 1048576 bytes starts at line 4: the rest of the file is not read']]);
    expect(rejected[0]!.excerpt.length).toBeLessThanOrEqual(1024);
    expect(ofType(records, 'quantity', 'heart_rate').map((r) => r.external_id)).toEqual(['hr-1']);
    expect(ofType(records, 'quantity', 'body_mass')).toHaveLength(2);
  });
});
