import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../../../commands/ingestion/records.js';
import { decode, exportXml, ofKind, realdata, zipOf } from './exportFixtures.js';

/**
 * Issue 21 acceptance: every Apple export in ../shared/realdata/ (iOS 8 to 17, the malformed one,
 * watchOS 4 to 26 workouts with their GPX routes, an ECG) decodes with plausible results. The
 * files are read by path, never copied; expectations are counted from the files themselves.
 */

const healthkit = realdata('healthkit');
const fixtures = realdata('apple-health', 'reyrolle_fixtures');
const ecgSample = realdata('apple-health', 'heartphase_ecg', 'ecg-sample.csv');

/** Reasons a real export may give for an element it cannot store. */
const EXPECTED_REASONS = /^(unknown quantity type HKQuantityTypeIdentifier\w+|missing value)$/;

function count(text: string, re: RegExp): number {
  return text.match(re)?.length ?? 0;
}

function countByType(records: NormalizedRecord[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of records) if (r.kind === 'quantity' || r.kind === 'category') m.set(r.type, (m.get(r.type) ?? 0) + 1);
  return m;
}

describe.skipIf(!healthkit)('apple-health: the real export.xml files (iOS 8 to 17)', () => {
  if (!healthkit) console.log('skipped: ../shared/realdata/healthkit is absent');
  const files = healthkit ? readdirSync(healthkit).filter((f) => f.endsWith('.xml') && !f.includes('_cda')) : [];

  it.each(files)('%s decodes: every Record either stored or rejected with a known reason, dates in UTC', async (file) => {
    const text = readFileSync(join(healthkit!, file), 'utf8');
    const { records, rejected } = await decode(Buffer.from(text));
    const samples = records.filter((r) => r.kind === 'quantity' || r.kind === 'category');
    const elements = count(text, /<Record /g) - count(text, /<Correlation[\s\S]*?<\/Correlation>/g) * 2;
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.length + rejected.length).toBe(elements);
    for (const r of rejected) {
      expect(r.reason).toMatch(EXPECTED_REASONS);
      expect(r.location).toMatch(/^export\.xml:\d+$/);
    }
    for (const r of samples) expect(r.start_date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Step counts in the catalog's unit, as many as the file holds.
    const steps = countByType(records).get('step_count') ?? 0;
    expect(steps).toBe(count(text, /<Record type="HKQuantityTypeIdentifierStepCount"[^>]*value=/g));
  });

  it('the malformed German export imports what can be read: damaged elements marked, rejections with reasons', async () => {
    const file = files.find((f) => f.includes('MALFORMED'));
    if (!file) return;
    const text = readFileSync(join(healthkit!, file), 'utf8');
    const { records, rejected } = await decode(Buffer.from(text));
    const damaged = records.filter((r) => 'metadata' in r && r.metadata.xml_damaged !== undefined);
    expect(damaged.length).toBeGreaterThan(0);
    expect(rejected.length).toBeGreaterThan(0);
    expect(ofKind(records, 'sleep_session').length).toBeGreaterThan(0);
    // iOS 8/9 heart rate came in count/s as aggregates: stored per minute, in a human range.
    for (const r of ofKind(records, 'quantity').filter((q) => q.type === 'heart_rate')) expect(r.value).toBeGreaterThan(20), expect(r.value).toBeLessThan(250);
    // Withings' user-entered measurements keep their marker even in damaged elements.
    expect(ofKind(records, 'quantity').some((q) => q.source === 'withings' && q.was_user_entered)).toBe(true);
  });

  it('the same export in a zip (with export_cda.xml beside it) gives the same records as the bare file', async () => {
    const file = files.find((f) => f.startsWith('rgosdin'));
    if (!file) return;
    const xml = readFileSync(join(healthkit!, file));
    const cda = realdata('healthkit', 'rgosdin_docs_export_cda.xml');
    const zip = await zipOf({ 'apple_health_export/export.xml': xml, ...(cda ? { 'apple_health_export/export_cda.xml': readFileSync(cda) } : {}) });
    const bare = await decode(xml);
    const zipped = await decode(zip);
    expect(zipped.records).toEqual(bare.records);
    expect(zipped.rejected.map((r) => r.reason)).toEqual(bare.rejected.map((r) => r.reason));
    // Every rejection (if this export still has any since the catalog learnt its types) names the file in the archive.
    for (const r of zipped.rejected) expect(r.location).toMatch(/^apple_health_export\/export\.xml:\d+$/);
    expect(zipped.records.length).toBeGreaterThan(0);
  });
});

describe.skipIf(!fixtures)('apple-health: real Workout elements (watchOS 4 to 26) with their GPX routes, in a zip', () => {
  if (!fixtures) console.log('skipped: ../shared/realdata/apple-health is absent');

  it('every workout is stored with its type, duration, statistics and the points of every route file it names', async () => {
    const xmlFiles = readdirSync(fixtures!).filter((f) => f.endsWith('.xml')).sort();
    const body = xmlFiles.map((f) => readFileSync(join(fixtures!, f), 'utf8')).join('\n');
    const entries: Record<string, Buffer | string> = { 'apple_health_export/export.xml': exportXml(body) };
    for (const f of readdirSync(join(fixtures!, 'workout-routes'))) entries[`apple_health_export/workout-routes/${f}`] = readFileSync(join(fixtures!, 'workout-routes', f));
    const { records, rejected } = await decode(await zipOf(entries));
    for (const r of rejected) expect(r.reason).toMatch(EXPECTED_REASONS);
    const workouts = ofKind(records, 'workout');
    expect(workouts).toHaveLength(count(body, /<Workout /g));
    for (const w of workouts) {
      expect(w.type).not.toBe('other');
      expect(w.duration_s).toBeGreaterThan(60);
      expect(w.source).toBe('apple');
      // A watch named by the device string is body-worn; older workouts carry no device string.
      expect(w.body_worn).toBe(w.device !== null && w.device.includes('Watch'));
      expect(w.metadata.route_files_missing).toBeUndefined();
      expect(w.metadata.route_files_damaged).toBeUndefined();
      if (w.metadata.route_files) {
        expect(w.route.length).toBeGreaterThan(10);
        const times = w.route.map((p) => p.timestamp);
        expect([...times].sort()).toEqual(times);
        // A file two routes name is read once.
        expect(new Set(times).size).toBeGreaterThan(times.length * 0.95);
        // Points lie within the workout, give or take a minute.
        expect(Date.parse(times[0]!)).toBeGreaterThan(Date.parse(w.start_date) - 60_000);
        expect(Date.parse(times[times.length - 1]!)).toBeLessThan(Date.parse(w.end_date) + 60_000);
      }
    }
    const withStats = workouts.filter((w) => w.avg_heart_rate !== null);
    expect(withStats.length).toBeGreaterThan(0);
    for (const w of withStats) expect(w.avg_heart_rate!).toBeGreaterThan(40), expect(w.max_heart_rate!).toBeLessThan(230);
    const runs = workouts.filter((w) => w.type === 'running' && w.distance_m !== null);
    for (const w of runs) expect(w.distance_m! / w.duration_s).toBeLessThan(12);
    const parts = workouts.find((w) => Array.isArray(w.metadata.activities) && (w.metadata.activities as unknown[]).length > 10);
    expect(parts).toBeDefined();
    expect(parts!.metadata.route_files).toBeGreaterThan(10);
    // The records among the fragments: heart rate, resting heart rate, body mass, VO2 max.
    const types = countByType(records);
    expect(types.get('heart_rate')).toBe(count(body, /<Record type="HKQuantityTypeIdentifierHeartRate"/g));
    expect(types.get('vo2_max')).toBe(count(body, /<Record type="HKQuantityTypeIdentifierVO2Max"/g));
  });
});

describe.skipIf(!ecgSample)('apple-health: a real Apple Watch ECG recording', () => {
  if (!ecgSample) console.log('skipped: ../shared/realdata/apple-health/heartphase_ecg is absent');

  it('its voltages under a header in Apple\'s layout become one ECG record at 512 Hz', async () => {
    const samples = readFileSync(ecgSample!, 'utf8');
    const header = 'Name,Test Person\nDate of Birth,"Jan 1, 1970"\nRecorded Date,2024-05-01 09:00:00 +0200\nClassification,Sinus Rhythm\nSymptoms,\nSoftware Version,2.0\nDevice,"Watch6,2"\nSample Rate,512 hertz\nLead,Lead I\nUnit,µV\n\n';
    const zip = await zipOf({ 'apple_health_export/export.xml': exportXml(''), 'apple_health_export/electrocardiograms/ecg_2024-05-01.csv': header + samples });
    const { records, rejected } = await decode(zip);
    expect(rejected).toEqual([]);
    const [ecg] = ofKind(records, 'ecg');
    const lines = samples.split('\n').filter((l) => l.trim() !== '').length;
    expect(ecg!.number_of_measurements).toBe(lines);
    expect(ecg!.sampling_frequency_hz).toBe(512);
    expect(Date.parse(ecg!.end_date) - Date.parse(ecg!.start_date)).toBe(Math.round((lines / 512) * 1000));
    for (const v of ecg!.voltages) expect(Math.abs(v)).toBeLessThan(5000);
  });
});
