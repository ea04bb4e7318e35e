import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import FitParser from 'fit-file-parser';
import { describe, expect, it } from 'vitest';
import type { WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { bufferByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import { fitDecoder } from '../../../../src/sources/files/fit/fitDecoder.js';
import { zipEntries } from '../../../fixtures/zip/buildZip.js';
import { decodeAll, ofType } from '../decodeAll.js';
import { realdataPath } from '../realdata.js';

/**
 * Issue 39 acceptance on the real files in ../shared/realdata/fit: each workout equals its file's
 * session and the heart-rate samples its records, as the decoder's whole-file parse (another path
 * through the same SDK) reads them; legs of a triathlon; weighings in kg; damage named.
 */
const dir = realdataPath('fit');
const DAMAGED = new Set(['activity-unexpected-eof.fit', 'activity-settings-corruptheader.fit', 'strava-android-app-201.10-b1218918.fit']);
const files = dir ? readdirSync(dir).filter((f) => f.endsWith('.fit')).sort() : [];
const read = (f: string) => readFileSync(join(dir!, f));
const decode = (f: string) => decodeAll(fitDecoder(), bufferByteSource(read(f)));

type Monitor = { timestamp: Date; activity_type?: string; cycles?: number; active_calories?: number; duration_min?: number };
type Session = { sport: string; start_time: Date; total_elapsed_time: number; total_timer_time: number; total_distance?: number };
async function wholeFile(f: string): Promise<{ sessions: Session[]; heartRates: number }> {
  const parsed = (await new FitParser({ force: true }).parseAsync(read(f))) as unknown as { sessions: Session[]; records: { heart_rate?: number }[] };
  return { sessions: parsed.sessions, heartRates: parsed.records.filter((r) => typeof r.heart_rate === 'number').length };
}

describe('fit on the real device files (issue 39 acceptance, contracts §20)', () => {
  it.skipIf(dir)('skipped: ../shared/realdata/fit is absent', () => {});

  for (const f of files.filter((f) => !DAMAGED.has(f))) {
    it.skipIf(!dir)(`${f}: a workout per session with its sport, start, duration and distance; a heart_rate sample per record with a heart rate`, async () => {
      const { sessions, heartRates } = await wholeFile(f);
      let decoded;
      try {
        decoded = await decode(f);
      } catch (err) {
        // A file holding nothing to import (heart rates without a time, say) fails as a whole (contracts §17).
        expect(sessions).toEqual([]);
        expect(String(err)).toMatch(heartRates > 0 ? /a heart rate without a timestamp/ : /nothing to import/);
        return;
      }
      const { records, rejected } = decoded;
      const workouts = ofType(records, 'workout');
      expect(workouts.map((w) => [w.metadata.fit_sport, w.start_date, w.metadata.elapsed_time_s, w.duration_s, w.distance_m])).toEqual(
        sessions.map((s) => [s.sport, s.start_time.toISOString(), s.total_elapsed_time, s.total_timer_time, s.total_distance ?? null]),
      );
      expect(ofType(records, 'quantity', 'heart_rate').filter((r) => r.metadata.fit_message === 'record')).toHaveLength(heartRates);
      expect(rejected).toEqual([]);
      for (const w of workouts) for (const p of w.route) expect(Math.abs(p.latitude) <= 90 && Math.abs(p.longitude) <= 180).toBe(true);
      expect(new Set(records.map((r) => `${r.kind}:${r.external_id}`)).size).toBe(records.length);
    });
  }

  it.skipIf(!dir)('the Forerunner 920XT triathlon gives one workout per leg, transitions as such, with its route and local offset', async () => {
    const workouts = ofType((await decode('sample_mulitple_header.fit')).records, 'workout');
    expect(workouts.map((w) => w.type)).toEqual(['open_water_swimming', 'transition', 'cycling', 'transition', 'running']);
    expect(workouts.map((w) => w.metadata.multisport)).toEqual([1, 2, 3, 4, 5].map((leg) => ({ leg, legs: 5 })));
    expect(workouts.every((w: WorkoutRecord) => w.route.length > 0 && w.metadata.timezone === '+02:00')).toBe(true);
    expect(workouts[0]).toMatchObject({ source: 'garmin', device: 'Garmin Forerunner 920 XT' });
    expect(JSON.stringify(workouts)).not.toMatch(/serial/);
  });

  it.skipIf(!dir)('the weight scale files read back in kg, with body fat', async () => {
    const { records } = await decode('WeightScaleSingleUser.fit');
    expect(ofType(records, 'quantity', 'body_mass').map((r) => [r.value, r.unit])).toEqual([[75.8, 'kg'], [76.09, 'kg']]);
    expect(ofType(records, 'quantity', 'body_fat_percentage').map((r) => r.value)).toEqual([22.3, 25.1]);
  });

  it.skipIf(!dir)('the vivofit monitoring file gives steps per interval, each the rise of its activity type\'s day counter, adding up to the file\'s day totals (contracts §20)', async () => {
    const parsed = (await new FitParser({ force: true }).parseAsync(read('MonitoringFile.fit'))) as unknown as { monitors: Monitor[]; monitor_info: { timestamp: Date }[] };
    const dayTotals = parsed.monitors.filter((m) => m.duration_min);
    const dayStart = parsed.monitor_info[0]!.timestamp.getTime();
    const { records, rejected } = await decode('MonitoringFile.fit');
    expect(rejected).toEqual([]);
    const steps = ofType(records, 'quantity', 'step_count');
    // One interval per reading of the counter (the file's messages with cycles, besides its day totals), none negative or empty.
    expect(steps).toHaveLength(parsed.monitors.filter((m) => typeof m.cycles === 'number' && !m.duration_min).length);
    for (const r of steps) {
      expect(r.value).toBeGreaterThan(0);
      expect(Number.isInteger(r.value)).toBe(true);
      expect(r.metadata).toMatchObject({ fit_intensity: expect.any(Number), timezone: '-06:00' });
      expect(Date.parse(r.start_date)).toBeGreaterThanOrEqual(dayStart);
      expect(Date.parse(r.end_date)).toBeGreaterThan(Date.parse(r.start_date));
      expect(Date.parse(r.end_date)).toBeLessThanOrEqual(dayStart + 86_400_000);
    }
    for (const total of dayTotals) {
      const mine = steps.filter((r) => r.metadata.fit_activity_type === total.activity_type);
      // Each interval starts where the one before it of its activity type ended; the first at the day's start.
      expect(mine.map((r) => r.start_date)).toEqual([new Date(dayStart).toISOString(), ...mine.slice(0, -1).map((r) => r.end_date)]);
      // The day total (cycles; steps are cycles × 2) is the sum of its intervals, so it adds no record of its own.
      expect(mine.reduce((sum, r) => sum + r.value, 0)).toBe(total.cycles! * 2);
    }
    // Active energy comes only in the day totals: one interval per activity type, the whole day.
    expect(ofType(records, 'quantity', 'active_energy_burned').map((r) => [r.metadata.fit_activity_type, r.value, r.start_date, r.end_date])).toEqual(
      dayTotals.map((t) => [t.activity_type, t.active_calories, new Date(dayStart).toISOString(), t.timestamp.toISOString()]),
    );
  });

  it.skipIf(!dir)('the cut-off file is read up to its damage, then one rejection names the byte offset and why', async () => {
    const { records, rejected } = await decode('activity-unexpected-eof.fit');
    expect(ofType(records, 'workout')).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.location).toBe('the file byte 751');
    expect(rejected[0]!.reason).toMatch(/cut off: its header declares 771 bytes, it holds 768/);
  });

  it.skipIf(!dir)('the file with a broken second header keeps its first file and names where the second breaks', async () => {
    const { records, rejected } = await decode('activity-settings-corruptheader.fit');
    expect(ofType(records, 'workout')).toHaveLength(1);
    expect(rejected).toEqual([expect.objectContaining({ location: 'the file byte 771', reason: expect.stringMatching(/no ".FIT" signature/) })]);
  });

  it.skipIf(!dir)('the Strava app file, invalid after its first messages (other decoders stop there too), keeps its session and the route points before the damage', async () => {
    const { records, rejected } = await decode('strava-android-app-201.10-b1218918.fit');
    const [run] = ofType(records, 'workout');
    expect(run).toMatchObject({ type: 'running', source: 'strava', distance_m: expect.any(Number) });
    expect(run!.route.length).toBeGreaterThan(0);
    expect(rejected).toEqual([expect.objectContaining({ location: 'the file byte 7471', reason: expect.stringMatching(/cut off: its header declares 78252 bytes, it holds 78233/) })]);
  });

  it.skipIf(!dir)('a zip of every file gives what the files give one by one, each rejection at its entry and byte', async () => {
    const zip = await zipEntries(files.map((f) => ({ name: `Garmin/Activities/${f}`, data: read(f) })));
    const { records, rejected } = await decodeAll(fitDecoder(), bufferByteSource(zip));
    let one = 0;
    for (const f of files) one += (await decode(f).catch(() => ({ records: [] }))).records.length;
    expect(records).toHaveLength(one);
    expect(rejected.map((r) => r.location)).toContain('Garmin/Activities/activity-unexpected-eof.fit byte 751');
  });
});
