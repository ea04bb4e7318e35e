import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ParseItem, QuantityRecord, RejectedItem, SleepSessionRecord, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { gadgetbridgeParser } from '../../../../src/sources/files/device-c/gadgetbridgeParser.js';
import { at, buildGadgetbridgeDb, buildGadgetbridgeExport, DEVICES, insertDevice } from '../../../fixtures/device-c/buildGadgetbridgeExport.js';

const ctx = { provider: 'device-c', receivedAt: '2026-11-22T00:00:00.000Z', dataType: null };
const MI = DEVICES.miBand6.identifier;
const GTR = DEVICES.gtr4.identifier;
const BAND8 = DEVICES.band8.identifier;
const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

async function parse(payload: Buffer) {
  const items: ParseItem[] = [];
  for await (const item of gadgetbridgeParser.parse(payload, ctx)) items.push(item);
  const records = items.flatMap((i) => ('record' in i ? [i.record] : []));
  const rejected = items.flatMap((i) => ('rejected' in i ? [i.rejected] : []));
  const quantities = records.filter((r): r is QuantityRecord => r.kind === 'quantity');
  return {
    items,
    records,
    rejected,
    steps: quantities.filter((r) => r.type === 'step_count'),
    heartRates: quantities.filter((r) => r.type === 'heart_rate'),
    sleeps: records.filter((r): r is SleepSessionRecord => r.kind === 'sleep_session'),
    workouts: records.filter((r): r is WorkoutRecord => r.kind === 'workout'),
    byId: (id: string) => records.find((r) => r.external_id === id),
  };
}

const fixture = parse(buildGadgetbridgeExport());

describe('device-c Gadgetbridge export (contracts §3 device-c: activity samples, sleep and workouts are read from its tables)', () => {
  it('reads every table of the export: steps, heart rate, sleep sessions and workouts, and rejects only the invalid rows (contracts §3)', async () => {
    const out = await fixture;
    expect(gadgetbridgeParser.slug).toBe('device-c');
    expect(out.steps).toHaveLength(75 + 35 + 10);
    expect(out.heartRates).toHaveLength(288 + 250 + 10);
    expect(out.sleeps).toHaveLength(3);
    expect(out.workouts).toHaveLength(2);
    expect(out.rejected).toHaveLength(5);
    expect(out.records).toHaveLength(120 + 548 + 3 + 2);
    // external_id is the key that makes a re-upload update instead of duplicate (records.ts)
    expect(new Set(out.records.map((r) => r.external_id)).size).toBe(out.records.length);
    // records that need the whole upload (sleep nights) come at the end
    expect(out.items.slice(-3).every((i) => 'record' in i && i.record.kind === 'sleep_session')).toBe(true);
  });

  it('turns a minute with steps into a step_count record over that minute, in count, keyed by table, device and timestamp (contracts §3, §4 step_count)', async () => {
    const { byId } = await fixture;
    expect(byId(`MI_BAND_ACTIVITY_SAMPLE:${MI}:${at(7)}:step_count`)).toEqual({
      provider: 'device-c',
      source: 'xiaomi',
      device: 'Huami Mi Smart Band 6',
      body_worn: true,
      kind: 'quantity',
      external_id: `MI_BAND_ACTIVITY_SAMPLE:${MI}:${at(7)}:step_count`,
      type: 'step_count',
      value: 100,
      unit: 'count',
      start_date: '2025-03-10T07:00:00.000Z',
      end_date: '2025-03-10T07:01:00.000Z',
      source_name: 'Gadgetbridge',
      source_bundle_id: null,
      device_model: 'Mi Smart Band 6',
      product_type: 'MIBAND6',
      was_user_entered: false,
      metadata: {
        timezone: null,
        table: 'MI_BAND_ACTIVITY_SAMPLE',
        raw_kind: 1,
        raw_intensity: 90,
        gadgetbridge_device_id: 1,
        gadgetbridge_user_id: 1,
        original_value: 100,
        original_unit: 'steps',
      },
    });
    const run = byId(`HUAMI_EXTENDED_ACTIVITY_SAMPLE:${GTR}:${at(16, 30)}:step_count`) as QuantityRecord;
    expect(run).toMatchObject({ value: 160, unit: 'count', source: 'zepp', device: 'Huami Amazfit GTR 4', start_date: '2025-03-10T16:30:00.000Z', end_date: '2025-03-10T16:31:00.000Z' });
    expect(run.metadata).toMatchObject({ table: 'HUAMI_EXTENDED_ACTIVITY_SAMPLE', raw_kind: 64, raw_intensity: 200, sleep: 0, deep_sleep: 0, rem_sleep: 0 });
    expect(byId(`XIAOMI_ACTIVITY_SAMPLE:${BAND8}:${at(8, 9)}:step_count`)).toMatchObject({ value: 50, source: 'xiaomi', device: 'Xiaomi Smart Band 8' });
  });

  it('stores no record for a minute without steps (contracts §3)', async () => {
    const { byId, steps } = await fixture;
    expect(byId(`MI_BAND_ACTIVITY_SAMPLE:${MI}:${at(9)}:step_count`)).toBeUndefined();
    expect(byId(`MI_BAND_ACTIVITY_SAMPLE:${MI}:${at(7, 30)}:step_count`)).toBeUndefined();
    expect(steps.every((s) => s.value > 0)).toBe(true);
    const miSteps = steps.filter((s) => s.metadata.table === 'MI_BAND_ACTIVITY_SAMPLE');
    expect(miSteps.reduce((sum, s) => sum + s.value, 0)).toBe(30 * 100 + 15 * 80 + 30 * 110);
  });

  it('turns a heart-rate reading into a heart_rate record in count/min at its minute, and treats -1, 0 and 255 as no reading (contracts §3, §4 heart_rate)', async () => {
    const { byId, heartRates } = await fixture;
    const walk = byId(`MI_BAND_ACTIVITY_SAMPLE:${MI}:${at(7, 5)}:heart_rate`) as QuantityRecord;
    expect(walk).toMatchObject({
      kind: 'quantity',
      type: 'heart_rate',
      value: 110,
      unit: 'count/min',
      start_date: '2025-03-10T07:05:00.000Z',
      end_date: '2025-03-10T07:05:00.000Z',
      source: 'xiaomi',
      body_worn: true,
    });
    expect(walk.metadata).toMatchObject({ timezone: null, table: 'MI_BAND_ACTIVITY_SAMPLE', raw_kind: 1, raw_intensity: 90, original_value: 110, original_unit: 'bpm' });
    expect(byId(`MI_BAND_ACTIVITY_SAMPLE:${MI}:${at(-2, 1)}:heart_rate`)).toBeUndefined(); // -1
    expect(byId(`MI_BAND_ACTIVITY_SAMPLE:${MI}:${at(1, 1)}:heart_rate`)).toBeUndefined(); // 0
    expect(byId(`MI_BAND_ACTIVITY_SAMPLE:${MI}:${at(9, 1)}:heart_rate`)).toBeUndefined(); // 255
    expect(heartRates.filter((h) => h.metadata.table === 'MI_BAND_ACTIVITY_SAMPLE')).toHaveLength(288);
    expect(byId(`HUAMI_EXTENDED_ACTIVITY_SAMPLE:${GTR}:${at(16, 45)}:heart_rate`)).toMatchObject({ value: 150 });
    expect(heartRates.every((h) => h.value >= 20 && h.value <= 250)).toBe(true);
  });

  it('builds one sleep session with phases from a night of Huami sleep kinds (9 light, 11 deep; 0 and 10 repeat the previous kind) (contracts §3 sleep)', async () => {
    const { byId } = await fixture;
    const night = byId(`sleep:${MI}:${at(-1)}`) as SleepSessionRecord;
    expect(night).toMatchObject({
      provider: 'device-c',
      source: 'xiaomi',
      device: 'Huami Mi Smart Band 6',
      body_worn: true,
      kind: 'sleep_session',
      bedtime_start: '2025-03-09T23:00:00.000Z',
      bedtime_end: '2025-03-10T06:30:00.000Z',
      total_sleep_seconds: (30 + 60 + 135 + 90 + 90 + 30) * 60,
      light_sleep_seconds: (30 + 60 + 135) * 60,
      deep_sleep_seconds: (90 + 90 + 30) * 60,
      rem_sleep_seconds: 0,
      awake_seconds: 15 * 60,
      sleep_score: null,
      resting_hr: null,
    });
    expect(night.phases).toEqual([
      { phase: 'light', start_date: '2025-03-09T23:00:00.000Z', end_date: '2025-03-09T23:30:00.000Z' },
      { phase: 'deep', start_date: '2025-03-09T23:30:00.000Z', end_date: '2025-03-10T01:00:00.000Z' },
      { phase: 'light', start_date: '2025-03-10T01:00:00.000Z', end_date: '2025-03-10T02:00:00.000Z' },
      { phase: 'awake', start_date: '2025-03-10T02:00:00.000Z', end_date: '2025-03-10T02:15:00.000Z' },
      { phase: 'deep', start_date: '2025-03-10T02:15:00.000Z', end_date: '2025-03-10T03:45:00.000Z' },
      { phase: 'light', start_date: '2025-03-10T03:45:00.000Z', end_date: '2025-03-10T06:00:00.000Z' },
      { phase: 'deep', start_date: '2025-03-10T06:00:00.000Z', end_date: '2025-03-10T06:30:00.000Z' },
    ]);
    expect(night.metadata).toMatchObject({ timezone: null, table: 'MI_BAND_ACTIVITY_SAMPLE', method: 'raw_kind', raw_kind_scheme: 'huami', min_heart_rate: 50, max_heart_rate: 60 });
  });

  it('tells light, deep and REM of Zepp OS extended samples from their SLEEP, DEEP_SLEEP and REM_SLEEP columns (contracts §3 sleep)', async () => {
    const { byId } = await fixture;
    const nap = byId(`sleep:${GTR}:${at(14)}`) as SleepSessionRecord;
    expect(nap).toMatchObject({
      source: 'zepp',
      device: 'Huami Amazfit GTR 4',
      bedtime_start: '2025-03-10T14:00:00.000Z',
      bedtime_end: '2025-03-10T14:40:00.000Z',
      total_sleep_seconds: 2400,
      light_sleep_seconds: 900,
      deep_sleep_seconds: 900,
      rem_sleep_seconds: 600,
      awake_seconds: 0,
    });
    expect(nap.phases.map((p) => p.phase)).toEqual(['light', 'deep', 'rem']);
    expect(nap.metadata).toMatchObject({ raw_kind_scheme: 'huami_extended', avg_heart_rate: 58 });
  });

  it('reads the sleep sessions a Xiaomi band computed (XIAOMI_SLEEP_TIME_SAMPLE with its stages), totals from the table (contracts §3 sleep)', async () => {
    const { byId } = await fixture;
    const night = byId(`sleep:${BAND8}:${at(-1, 30)}`) as SleepSessionRecord;
    expect(night).toMatchObject({
      source: 'xiaomi',
      device: 'Xiaomi Smart Band 8',
      body_worn: true,
      bedtime_start: '2025-03-09T23:30:00.000Z',
      bedtime_end: '2025-03-10T07:00:00.000Z',
      total_sleep_seconds: 420 * 60,
      deep_sleep_seconds: 90 * 60,
      light_sleep_seconds: 250 * 60,
      rem_sleep_seconds: 80 * 60,
      awake_seconds: 30 * 60,
    });
    expect(night.phases.map((p) => [p.phase, p.start_date.slice(11, 16), p.end_date.slice(11, 16)])).toEqual([
      ['light', '23:30', '00:30'],
      ['deep', '00:30', '01:30'],
      ['light', '01:30', '03:00'],
      ['rem', '03:00', '04:00'],
      ['awake', '04:00', '04:30'],
      ['light', '04:30', '06:00'],
      ['rem', '06:00', '06:20'],
      ['deep', '06:20', '06:50'],
      ['light', '06:50', '07:00'],
    ]);
    expect(night.metadata).toMatchObject({ timezone: null, table: 'XIAOMI_SLEEP_TIME_SAMPLE', method: 'sleep_table', stage_samples: 9, is_awake: false });
  });

  it('turns BASE_ACTIVITY_SUMMARY rows into workouts with SUMMARY_DATA figures; the route stays empty and GPX_TRACK is kept in metadata (contracts §3 workouts)', async () => {
    const { byId } = await fixture;
    const run = byId(`workout:${GTR}:${at(16, 30) * 1000}`) as WorkoutRecord;
    expect(run).toMatchObject({
      provider: 'device-c',
      source: 'zepp',
      device: 'Huami Amazfit GTR 4',
      body_worn: true,
      kind: 'workout',
      type: 'running',
      start_date: '2025-03-10T16:30:00.000Z',
      end_date: '2025-03-10T17:05:00.000Z',
      duration_s: 2100,
      active_energy_kcal: 412,
      distance_m: 5230.4,
      avg_heart_rate: 151,
      max_heart_rate: 172,
      steps: 5600,
      route: [],
    });
    expect(run.metadata).toMatchObject({
      timezone: null,
      table: 'BASE_ACTIVITY_SUMMARY',
      gadgetbridge_id: 1,
      name: 'Outdoor running',
      activity_kind: 0x10,
      activity_kind_name: 'RUNNING',
      gpx_track: '/storage/emulated/0/Android/data/nodomain.freeyourgadget.gadgetbridge/files/gadgetbridge-track-2025-03-10T16_30_00.gpx',
      active_seconds: 2040,
    });
    expect(run.metadata.derived_from_samples).toBeUndefined();
  });

  it('takes steps and heart rate of a workout without SUMMARY_DATA from the device minutes it spans (contracts §3 workouts)', async () => {
    const { byId } = await fixture;
    expect(byId(`workout:${MI}:${at(7) * 1000}`)).toMatchObject({
      source: 'xiaomi',
      type: 'walking',
      duration_s: 1800,
      steps: 3000,
      avg_heart_rate: 110,
      max_heart_rate: 110,
      distance_m: null,
      active_energy_kcal: null,
      route: [],
      metadata: { gadgetbridge_id: 2, activity_kind_name: 'WALKING', summary_data: null, derived_from_samples: ['steps', 'avg_heart_rate', 'max_heart_rate'] },
    });
  });

  it('rejects rows with invalid values, located by table and key, with the reason and an excerpt; the rest is stored (contracts §3 rejected_records)', async () => {
    const { rejected, byId } = await fixture;
    expect(rejected.map((r) => [r.location, r.reason])).toEqual([
      ['MI_BAND_ACTIVITY_SAMPLE:TIMESTAMP=0,DEVICE_ID=1', expect.stringMatching(/^TIMESTAMP 0 \(1970-01-01T00:00:00\.000Z\) is outside/)],
      [`MI_BAND_ACTIVITY_SAMPLE:TIMESTAMP=${at(12, 31)},DEVICE_ID=1`, 'STEPS -5 is negative'],
      [`MI_BAND_ACTIVITY_SAMPLE:TIMESTAMP=${at(15, 3)},DEVICE_ID=1`, expect.stringMatching(/^HEART_RATE 300 is out of range/)],
      ['MI_BAND_ACTIVITY_SAMPLE:TIMESTAMP=4102444800,DEVICE_ID=1', expect.stringMatching(/^TIMESTAMP 4102444800 \(2100-01-01T00:00:00\.000Z\) is outside/)],
      ['BASE_ACTIVITY_SUMMARY:3', `END_TIME ${at(18, 40) * 1000} is before START_TIME ${at(19) * 1000}`],
    ]);
    expect(JSON.parse(rejected[1]!.excerpt)).toMatchObject({ TIMESTAMP: at(12, 31), DEVICE_ID: 1, STEPS: -5 });
    expect(rejected.every((r) => Buffer.byteLength(r.excerpt) <= 1024)).toBe(true);
    // the neighbours of a rejected minute are stored
    expect(byId(`MI_BAND_ACTIVITY_SAMPLE:${MI}:${at(12, 30)}:heart_rate`)).toBeDefined();
  });

  it('names the vendor from DEVICE.MANUFACTURER and NAME and the device as "MANUFACTURER NAME" or its alias; bands and watches are body-worn (contracts §3, spec Merged view)', async () => {
    const { records } = await fixture;
    const byDevice = new Map(records.map((r) => [r.device, [r.source, r.body_worn]]));
    expect(Object.fromEntries(byDevice)).toEqual({
      'Huami Mi Smart Band 6': ['xiaomi', true],
      'Huami Amazfit GTR 4': ['zepp', true],
      'Xiaomi Smart Band 8': ['xiaomi', true],
    });

    const payload = buildGadgetbridgeDb((db) => {
      insertDevice(db, { id: 1, identifier: 'AA:BB:CC:00:11:22', name: 'Amazfit Bip', manufacturer: 'Huami', typeName: 'AMAZFITBIP', alias: 'My Bip' });
      insertDevice(db, { id: 2, identifier: 'AA:BB:CC:00:11:33', name: 'Pebble Time', manufacturer: 'Pebble', typeName: 'PEBBLE' });
      const sample = db.prepare('INSERT INTO "MI_BAND_ACTIVITY_SAMPLE" VALUES (?, ?, 1, 10, 20, 1, 70)');
      sample.run(at(10), 1);
      sample.run(at(10), 2);
      sample.run(at(10), 9); // no DEVICE row
    });
    const { steps } = await parse(payload);
    expect(steps.map((s) => [s.device, s.source, s.body_worn, s.external_id])).toEqual([
      ['My Bip', 'zepp', true, `MI_BAND_ACTIVITY_SAMPLE:AA:BB:CC:00:11:22:${at(10)}:step_count`],
      ['Pebble Time', 'pebble', true, `MI_BAND_ACTIVITY_SAMPLE:AA:BB:CC:00:11:33:${at(10)}:step_count`],
      [null, 'device-c', true, `MI_BAND_ACTIVITY_SAMPLE:device-9:${at(10)}:step_count`],
    ]);
  });

  it('answers one rejected item at location "database" for a payload that is not a readable SQLite database (contracts §3)', async () => {
    const real = buildGadgetbridgeExport();
    const truncated = real.subarray(0, 8192);
    const zip = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(200)]);
    const cases: [Buffer, RegExp][] = [
      [Buffer.from('{"records":[]}'), /^not a SQLite database/],
      [Buffer.alloc(0), /^empty upload/],
      [zip, /^a ZIP archive/],
      [truncated, /^truncated SQLite database/],
      [Buffer.concat([real.subarray(0, 100), Buffer.alloc(real.length - 100, 0xab)]), /^unreadable SQLite database/],
    ];
    for (const [payload, reason] of cases) {
      const { items } = await parse(payload);
      expect(items).toHaveLength(1);
      const rejected = (items[0] as { rejected: RejectedItem }).rejected;
      expect(rejected.location).toBe('database');
      expect(rejected.reason).toMatch(reason);
      expect(Buffer.byteLength(rejected.excerpt)).toBeLessThanOrEqual(1024);
    }
  });

  it('answers one rejected item at location "database" for a SQLite file without Gadgetbridge tables (contracts §3)', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES (\'hello\')');
    const payload = db.serialize();
    db.close();
    const { items } = await parse(payload);
    expect(items).toEqual([{ rejected: { location: 'database', reason: expect.stringMatching(/^no Gadgetbridge data tables/), excerpt: 'tables: notes' } }]);
  });

  it('reads an export copied from Android in WAL mode and leaves the uploaded bytes unchanged (contracts §3: the raw upload is stored unchanged)', async () => {
    const payload = buildGadgetbridgeExport({ walHeader: true });
    const before = Buffer.from(payload);
    const wal = await parse(payload);
    expect(payload.equals(before)).toBe(true);
    const plain = await fixture;
    expect(wal.records.map((r) => r.external_id)).toEqual(plain.records.map((r) => r.external_id));
    expect(wal.rejected).toHaveLength(plain.rejected.length);
  });

  it('locates rejected rows of rowid tables (pre-Lollipop schema) as TABLE:rowid, and reads Mi Band 1 sleep kinds (4 deep, 5 light) (contracts §3)', async () => {
    const payload = buildGadgetbridgeDb(
      (db) => {
        insertDevice(db, { id: 1, identifier: '88:0F:10:00:00:01', name: 'MI', manufacturer: 'Xiaomi', typeName: 'MIBAND', type: 10 });
        const sample = db.prepare('INSERT INTO "MI_BAND_ACTIVITY_SAMPLE" VALUES (?, 1, 1, 0, ?, ?, 0)');
        for (let m = 0; m < 20; m++) sample.run(at(1, m), 0, m < 10 ? 5 : 4);
        sample.run(at(2), -1, 1);
      },
      { withoutRowid: false },
    );
    const { rejected, sleeps } = await parse(payload);
    expect(rejected).toEqual([{ location: 'MI_BAND_ACTIVITY_SAMPLE:21', reason: 'STEPS -1 is negative', excerpt: expect.any(String) }]);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toMatchObject({
      source: 'xiaomi',
      device: 'Xiaomi MI',
      bedtime_start: iso(at(1)),
      bedtime_end: iso(at(1, 20)),
      light_sleep_seconds: 600,
      deep_sleep_seconds: 600,
      metadata: { raw_kind_scheme: 'mi_band_1' },
    });
  });

  it('splits sleep minutes into separate nights at a gap of an hour and drops sessions under five minutes of sleep (contracts §3 sleep)', async () => {
    const payload = buildGadgetbridgeDb((db) => {
      insertDevice(db, { ...DEVICES.miBand6 });
      const sample = db.prepare('INSERT INTO "MI_BAND_ACTIVITY_SAMPLE" VALUES (?, 1, 1, 2, 0, ?, 0)');
      for (let m = 0; m < 30; m++) sample.run(at(1, m), 9); // 01:00-01:30 light
      sample.run(at(1, 30), 1);
      for (let m = 0; m < 20; m++) sample.run(at(2, 29 + m), 11); // 02:29: 59 min later, same night
      sample.run(at(2, 49), 1);
      for (let m = 0; m < 3; m++) sample.run(at(4, m), 9); // 3 minutes, 71 min later: a new, too short night
    });
    const { sleeps } = await parse(payload);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toMatchObject({ bedtime_start: iso(at(1)), bedtime_end: iso(at(2, 49)), light_sleep_seconds: 1800, deep_sleep_seconds: 1200, awake_seconds: 59 * 60 });
  });
});


describe('device-c: the database comes from a stranger and is opened defensively (trusted_schema off, query_only, quick_check first)', () => {
  const onlyDatabaseItem = (items: ParseItem[]) => {
    expect(items).toHaveLength(1);
    const rejected = (items[0] as { rejected: RejectedItem }).rejected;
    expect(rejected.location).toBe('database');
    expect(Buffer.byteLength(rejected.excerpt)).toBeLessThanOrEqual(1024);
    return rejected.reason;
  };

  it('contracts §18: refuses, as one "database" item, a file declaring views or triggers (the app creates neither), even a view standing where a data table would be', async () => {
    const payload = buildGadgetbridgeDb((db) => {
      insertDevice(db, { ...DEVICES.gtr4 });
      const sample = db.prepare('INSERT INTO "HUAMI_EXTENDED_ACTIVITY_SAMPLE" ("TIMESTAMP", "DEVICE_ID", "USER_ID", "RAW_INTENSITY", "STEPS", "RAW_KIND", "HEART_RATE") VALUES (?, 1, 1, 50, ?, 1, 80)');
      for (let m = 0; m < 5; m++) sample.run(at(12, m), 100 + m);
      // A view named like a sample table, over rows the parser must never see.
      db.exec(`DROP TABLE "MI_BAND_ACTIVITY_SAMPLE";
        CREATE TABLE hidden ("TIMESTAMP" INTEGER, "DEVICE_ID" INTEGER, "STEPS" INTEGER);
        INSERT INTO hidden VALUES (${at(13)}, 1, 4242);
        CREATE VIEW "MI_BAND_ACTIVITY_SAMPLE" AS SELECT "TIMESTAMP", "DEVICE_ID", 1 AS "USER_ID", 0 AS "RAW_INTENSITY", "STEPS", 0 AS "RAW_KIND", 0 AS "HEART_RATE" FROM hidden;
        CREATE TRIGGER wipe AFTER INSERT ON "DEVICE" BEGIN DELETE FROM "HUAMI_EXTENDED_ACTIVITY_SAMPLE"; END;
        CREATE TRIGGER wipe_on_read INSTEAD OF DELETE ON "MI_BAND_ACTIVITY_SAMPLE" BEGIN DELETE FROM "HUAMI_EXTENDED_ACTIVITY_SAMPLE"; END;`);
    });
    const reason = onlyDatabaseItem((await parse(payload)).items);
    expect(reason).toMatch(/triggers \(wipe, wipe_on_read\)/);
    expect(reason).toMatch(/views \(MI_BAND_ACTIVITY_SAMPLE\)/);
  });

  it('refuses, as one "database" item, a file that declares a virtual table (named like a data table or not): reading or even checking it would run the module over tables the sender wrote', async () => {
    for (const [sql, names] of [
      ['DROP TABLE "MI_BAND_ACTIVITY_SAMPLE"; CREATE VIRTUAL TABLE "MI_BAND_ACTIVITY_SAMPLE" USING fts4("TIMESTAMP", "DEVICE_ID", "STEPS")', 'MI_BAND_ACTIVITY_SAMPLE'],
      ['create  virtual   table notes using fts5(body); CREATE VIRTUAL TABLE boxes USING rtree(id, x0, x1)', 'boxes, notes'],
    ] as const) {
      const payload = buildGadgetbridgeDb((db) => {
        insertDevice(db, { ...DEVICES.miBand6 });
        db.exec(sql);
      });
      const { items } = await parse(payload);
      expect(onlyDatabaseItem(items)).toBe(`not a Gadgetbridge export: the database declares virtual tables (${names}), which the app never creates`);
    }
  });

  it('refuses a damaged file as a whole before reading it, whichever page is damaged, and never throws out of the parse', async () => {
    const real = buildGadgetbridgeExport();
    const pageSize = real.readUInt16BE(16);
    const pages = real.length / pageSize;
    expect(pages).toBeGreaterThan(10);
    for (let page = 2; page <= pages; page++) {
      const damaged = Buffer.from(real);
      damaged.fill(0xab, (page - 1) * pageSize, page * pageSize);
      const { items } = await parse(damaged);
      expect(onlyDatabaseItem(items), `page ${page}`).toMatch(/^(corrupt|unreadable) SQLite database: /);
    }
  });

  it('refuses a cut-off file whose header does not vouch for its page count (so the size check cannot catch it)', async () => {
    const real = buildGadgetbridgeExport();
    const pageSize = real.readUInt16BE(16);
    const cut = Buffer.from(real.subarray(0, Math.floor(real.length / pageSize / 2) * pageSize));
    // "version-valid-for" no longer equals the change counter: the page count in the header is stale.
    cut.writeUInt32BE(cut.readUInt32BE(24) + 1, 92);
    const { items } = await parse(cut);
    expect(onlyDatabaseItem(items)).toMatch(/^(corrupt|unreadable) SQLite database: /);
  });
});

describe('SUMMARY_DATA figures from a stranger', () => {
  it('reads own properties only: a unit or key named like an Object builtin is unknown, not a function (contracts §3: a bad value is not stored)', async () => {
    const { summaryValue } = await import('../../../../src/sources/files/device-c/workouts.js');
    expect(summaryValue({ distanceMeters: { value: 5, unit: 'km' } }, 'distanceMeters', { km: 1000 })).toBe(5000);
    expect(summaryValue({ distanceMeters: { value: 5, unit: 'constructor' } }, 'distanceMeters', { km: 1000 })).toBeNull();
    expect(summaryValue({ distanceMeters: { value: 5, unit: '__proto__' } }, 'distanceMeters', { km: 1000 })).toBeNull();
    expect(summaryValue({}, 'constructor', { km: 1000 })).toBeNull();
  });
});
