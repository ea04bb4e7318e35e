import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { at, buildHealthConnectDatabase, buildHealthConnectZip, insertRecord, uuidOf } from '../../../fixtures/health-connect/buildHealthConnectExport.js';
import { zipEntries } from '../../../fixtures/zip/buildZip.js';
import { bufferByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import { UnreadableExportError } from '../../../../src/sources/files/exportShared/unreadableExport.js';
import { createHealthConnectDecoder, healthConnectSniff } from '../../../../src/sources/files/health-connect/healthConnectDecoder.js';
import { countByKind, CTX, decodeAll, ofType } from '../decodeAll.js';

let tempDir: string;
beforeEach(() => {
  tempDir = mkdtempSync(join(tmpdir(), 'hc-decoder-'));
});
afterEach(() => rmSync(tempDir, { recursive: true, force: true }));

const decoder = () => createHealthConnectDecoder({ tempDir });
const decodeZip = async (zip: Buffer) => decodeAll(decoder(), bufferByteSource(zip));
const iso = (ms: number) => new Date(ms).toISOString();

describe('health-connect decoder (contracts §13, issue 21)', () => {
  it('maps every record table of the fixture to the catalog, one record per row or sample', async () => {
    const { records, rejected } = await decodeZip(await buildHealthConnectZip());
    expect(countByKind(records)).toEqual({
      'quantity:step_count': 3,
      'quantity:distance': 1,
      'quantity:active_energy_burned': 1,
      'quantity:total_energy_burned': 1,
      'quantity:body_mass': 1,
      'quantity:height': 1,
      'quantity:body_fat_percentage': 1,
      'quantity:lean_body_mass': 1,
      'quantity:basal_metabolic_rate': 1,
      'quantity:oxygen_saturation': 1,
      'quantity:resting_heart_rate': 1,
      'quantity:hrv_rmssd': 1,
      'quantity:respiratory_rate': 1,
      'quantity:vo2_max': 1,
      'quantity:blood_glucose': 1,
      'quantity:body_temperature': 1,
      'quantity:heart_rate': 7,
      'quantity:blood_pressure_systolic': 1,
      'quantity:blood_pressure_diastolic': 1,
      observation: 1,
      nutrition: 1,
      'category:menstrual_flow': 1,
      sleep_session: 2,
      workout: 2,
    });
    expect(rejected.map((r) => r.location)).toEqual([
      'steps_record_table:rowid 4',
      'steps_record_table:rowid 5',
      'heart_rate_record_series_table:rowid 7',
      'sleep_stages_table:rowid 6',
      'exercise_route_table:rowid 3',
    ]);
    expect(rejected.map((r) => r.reason)).toEqual([
      'step_count: end_time is before start_time',
      'step_count: uuid is missing or not 16 bytes',
      `heart_rate sample 1 of ${uuidOf('heart_rate_record_table', 2)}: beats_per_minute is missing`,
      `sleep stage of ${uuidOf('sleep_session_record_table', 1)}: the stage lies outside its session`,
      `route point of ${uuidOf('exercise_session_record_table', 1)}: latitude 95 is outside -90..90`,
    ]);
  });

  it('converts the platform storage units (grams, calories, watts, mmol/L) to catalog units and keeps what was stored', async () => {
    const { records } = await decodeZip(await buildHealthConnectZip());
    const q = (type: string) => ofType(records, 'quantity', type)[0]!;
    expect([q('body_mass').value, q('body_mass').unit, q('body_mass').metadata.original_value, q('body_mass').metadata.original_unit]).toEqual([72.5, 'kg', 72_500, 'g']);
    expect([q('lean_body_mass').value, q('lean_body_mass').unit]).toEqual([59, 'kg']);
    expect([q('active_energy_burned').value, q('active_energy_burned').unit]).toEqual([120, 'kcal']);
    expect([q('total_energy_burned').value, q('total_energy_burned').unit]).toEqual([2300, 'kcal']);
    expect(q('basal_metabolic_rate').unit).toBe('kcal/d');
    expect(q('basal_metabolic_rate').value).toBeCloseTo((80 * 86_400) / 4184, 6);
    expect(q('blood_glucose').unit).toBe('mg/dL');
    expect(q('blood_glucose').value).toBeCloseTo(99.0858, 3);
    expect([q('distance').value, q('height').value, q('body_temperature').value, q('hrv_rmssd').value]).toEqual([1500, 1.78, 36.7, 42.5]);
  });

  it('takes the record id from the 16-byte uuid, the source from the app package and the device from device_info_table', async () => {
    const { records } = await decodeZip(await buildHealthConnectZip());
    const weight = ofType(records, 'quantity', 'body_mass')[0]!;
    expect(weight).toMatchObject({ external_id: uuidOf('weight_record_table', 1), provider: 'test-import', source: 'withings', device: 'Withings Body+', body_worn: false, source_bundle_id: 'com.withings.wiscale2', source_name: 'Health Mate', start_date: iso(at(7)) });
    expect(weight.metadata).toMatchObject({ id: uuidOf('weight_record_table', 1), dataOrigin: { packageName: 'com.withings.wiscale2' }, table: 'weight_record_table', row_id: 1, timezone: '+01:00', recordingMethod: 2 });
    const steps = ofType(records, 'quantity', 'step_count')[0]!;
    expect(steps).toMatchObject({ source: 'google', device: 'Google Pixel Watch 2', body_worn: true, start_date: iso(at(7, 35)), end_date: iso(at(7, 45)), value: 1200 });
    expect(ofType(records, 'quantity', 'total_energy_burned')[0]).toMatchObject({ source: 'samsung', device: 'samsung SM-S911B', body_worn: false });
  });

  it('numbers heart-rate samples within their series as written (<uuid>:<i>, as device-b does)', async () => {
    const { records } = await decodeZip(await buildHealthConnectZip());
    const hr = ofType(records, 'quantity', 'heart_rate');
    const a = uuidOf('heart_rate_record_table', 1);
    const b = uuidOf('heart_rate_record_table', 2);
    expect(hr.map((r) => [r.external_id, r.value, r.start_date])).toEqual([
      [`${a}:0`, 140, iso(at(7, 31))],
      [`${a}:1`, 150, iso(at(7, 40))],
      [`${a}:2`, 160, iso(at(7, 50))],
      [`${a}:3`, 155, iso(at(8, 0))],
      [`${a}:4`, 145, iso(at(8, 9))],
      [`${b}:0`, 72, iso(at(13, 1))],
      [`${b}:2`, 75, iso(at(13, 3))],
    ]);
    expect(hr.every((r) => r.start_date === r.end_date)).toBe(true);
  });

  it('builds sleep sessions from their stages, and a session without stages is asleep as a whole', async () => {
    const { records } = await decodeZip(await buildHealthConnectZip());
    const [night, nap] = ofType(records, 'sleep_session');
    expect(night).toMatchObject({ bedtime_start: iso(at(-1)), bedtime_end: iso(at(7)), light_sleep_seconds: 90 * 60 + 225 * 60, deep_sleep_seconds: 90 * 60, rem_sleep_seconds: 60 * 60, awake_seconds: 15 * 60, total_sleep_seconds: (90 + 225 + 90 + 60) * 60 });
    expect(night!.phases.map((p) => p.phase)).toEqual(['light', 'deep', 'rem', 'awake', 'light']);
    expect(nap).toMatchObject({ total_sleep_seconds: 40 * 60, phases: [], source: 'samsung' });
    expect(nap!.metadata.title).toBe('Nap');
  });

  it('gives workouts their type from the platform constants, their route, and totals from the same app’s records inside them', async () => {
    const { records } = await decodeZip(await buildHealthConnectZip());
    const [run, walk] = ofType(records, 'workout');
    expect(run).toMatchObject({ type: 'running', start_date: iso(at(7, 30)), end_date: iso(at(8, 10)), duration_s: 2400, steps: 1200, distance_m: 1500, active_energy_kcal: 120, avg_heart_rate: 150, max_heart_rate: 160 });
    expect(run!.metadata).toMatchObject({ exercise_type: 33, exercise_type_name: 'EXERCISE_SESSION_TYPE_RUNNING', title: 'Morning run', has_route: true });
    expect(run!.route.map((p) => [p.timestamp, p.latitude, p.longitude, p.altitude_m, p.horizontal_accuracy_m])).toEqual([
      [iso(at(7, 30)), 48.85, 2.35, 35, 4.5],
      [iso(at(7, 40)), 48.86, 2.35, 35, 4.5],
      [iso(at(8, 0)), 48.87, 2.35, 35, 4.5],
    ]);
    // Platform type 53 is WALKING (the Jetpack client's 79); the Fit steps in its span are another app's.
    expect(walk).toMatchObject({ type: 'walking', steps: null, distance_m: null, route: [] });
  });

  it('reads blood pressure, nutrition in grams and calories, and menstrual flow', async () => {
    const { records } = await decodeZip(await buildHealthConnectZip());
    expect(ofType(records, 'observation')[0]!.components.map((c) => [c.code, c.value, c.unit])).toEqual([
      ['systolic', 120, 'mmHg'],
      ['diastolic', 80, 'mmHg'],
    ]);
    expect(ofType(records, 'nutrition')[0]).toMatchObject({ name: 'Lunch bowl', meal_type: 'lunch', energy_kcal: 450, protein_g: 20, fat_g: 15, carbohydrates_g: 55, sugar_g: 8, fiber_g: 7, sodium_mg: 500, nutrients: { vitamin_c: { value: 60, unit: 'mg' } } });
    expect(ofType(records, 'category', 'menstrual_flow')[0]).toMatchObject({ value: 'medium' });
  });

  it('marks manual entries from recording_method 3', async () => {
    const { records } = await decodeZip(await buildHealthConnectZip({ extra: (db) => insertRecord(db, { table: 'weight_record_table', app: 3, device: 3, time: at(20), weight: 71_000, method: 3 }) }));
    expect(ofType(records, 'quantity', 'body_mass').map((r) => r.was_user_entered)).toEqual([false, true]);
  });

  it('gives the same items in the same order, with the same ids, every time the same bytes are decoded', async () => {
    const zip = await buildHealthConnectZip();
    const first = await decodeZip(zip);
    const second = await decodeZip(zip);
    expect(second.items).toEqual(first.items);
    expect(new Set(first.records.map((r) => `${r.kind}:${r.external_id}`)).size).toBe(first.records.length);
  });

  it('reads a database whose header says WAL mode, as Android leaves it', async () => {
    const { records } = await decodeZip(await buildHealthConnectZip({ walHeader: true }));
    expect(records.length).toBeGreaterThan(30);
  });

  it('removes the temporary copy of the database when the decoding ends, also when the reader stops early', async () => {
    await decodeZip(await buildHealthConnectZip());
    expect(readdirSync(tempDir)).toEqual([]);
    const it = decoder().decode(bufferByteSource(await buildHealthConnectZip()), CTX)[Symbol.asyncIterator]();
    await it.next();
    expect(readdirSync(tempDir).length).toBe(1);
    await it.return!(undefined);
    expect(readdirSync(tempDir)).toEqual([]);
  });

  it('refuses at the request what is not a zip (contracts §12 422), naming what was expected', () => {
    expect(healthConnectSniff(buildHealthConnectDatabase())).toMatch(/^an SQLite database, not a zip archive: expected the zip Health Connect/);
    expect(healthConnectSniff(Buffer.from('{"records":[]}'))).toMatch(/^not a zip archive/);
    expect(healthConnectSniff(Buffer.alloc(0))).toMatch(/^empty upload/);
    expect(healthConnectSniff(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14]))).toBeNull();
  });

  it('fails the import with a clear reason when the zip holds no database, a damaged one, or one that is not Health Connect’s', async () => {
    const fail = async (zip: Buffer) => {
      try {
        await decodeZip(zip);
      } catch (err) {
        expect(err).toBeInstanceOf(UnreadableExportError);
        return (err as Error).message;
      }
      throw new Error('decoded without failing');
    };
    expect(await fail(await zipEntries([{ name: 'readme.txt', data: Buffer.from('hi') }]))).toMatch(/^not a Health Connect export: the archive holds no health_connect_export\.db \(it holds readme\.txt\)/);
    const damagedSchema = buildHealthConnectDatabase();
    damagedSchema.fill(0x41, 4096, 8192);
    expect(await fail(await zipEntries([{ name: 'health_connect_export.db', data: damagedSchema }]))).toMatch(/^health_connect_export\.db is damaged/);
    const damagedTable = damagePageOf(buildHealthConnectDatabase(), 'exercise_route_table');
    expect(await fail(await zipEntries([{ name: 'health_connect_export.db', data: damagedTable }]))).toMatch(/^health_connect_export\.db is damaged \(SQLite's integrity check\)/);
    const truncated = buildHealthConnectDatabase().subarray(0, 10_000);
    expect(await fail(await zipEntries([{ name: 'health_connect_export.db', data: truncated }]))).toMatch(/is truncated: its header announces/);
    const virtual = buildHealthConnectDatabase({ extra: (db) => db.exec('CREATE VIRTUAL TABLE notes USING fts4(body)') });
    expect(await fail(await zipEntries([{ name: 'health_connect_export.db', data: virtual }]))).toMatch(/declares virtual tables \(notes\)/);
    expect(await fail(await zipEntries([{ name: 'x.db', data: buildForeignDatabase() }]))).toMatch(/^not Health Connect's database: none of its tables/);
    expect(readdirSync(tempDir)).toEqual([]);
  });
});

/** Overwrites the b-tree page header of a table's root page: the kind of damage only an integrity check finds before a read. */
function damagePageOf(bytes: Buffer, table: string): Buffer {
  const db = new Database(bytes);
  const { rootpage } = db.prepare('SELECT rootpage FROM sqlite_master WHERE name = ?').get(table) as { rootpage: number };
  db.close();
  const pageSize = bytes.readUInt16BE(16);
  bytes.fill(0x41, (rootpage - 1) * pageSize, (rootpage - 1) * pageSize + 8);
  return bytes;
}

function buildForeignDatabase(): Buffer {
  return buildHealthConnectDatabase({
    extra: (db) => {
      db.pragma('foreign_keys = OFF');
      for (const { name } of db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all() as { name: string }[]) db.exec(`DROP TABLE ${name}`);
      db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)');
    },
  });
}
