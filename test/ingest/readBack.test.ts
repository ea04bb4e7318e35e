import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  CategoryRecord,
  DailySummaryRecord,
  EcgRecord,
  HeartbeatSeriesRecord,
  MenstrualCycleRecord,
  NormalizedRecord,
  NutritionRecord,
  QuantityRecord,
  RejectedItem,
  RoutePoint,
  SleepSessionRecord,
  WorkoutRecord,
} from '../../commands/ingestion/records.js';
import { uploadStream } from '../../commands/ingestion/upload.js';
import { stageDurations, type StageDurations } from '../../projections/records/sleepStages.js';
import { findQuantityType } from '../../src/catalog/quantityCatalog.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { leavesOut } from '../../src/catalog/qualityFlags.js';
import {
  FIXTURE_A_NDJSON,
  fixtureA,
  fixtureB,
  fixtureBGzip,
  fixtureC,
  parsePayload,
  postUpload,
  requestFor,
  waitForEtl,
  type Coverage,
} from './uploadHelpers.js';

/**
 * Issue acceptance: "An upload of each device kind, read back through every read route, matches
 * its fixture record for record (values, units, times, provenance)."
 *
 * Each device kind is uploaded over HTTP by a user (contracts.md §3), the ETL job is awaited, and
 * every read route of spec "Reads" is read with view=all. The expectation is what the device's
 * own parser makes of the fixture (the parser tests pin that to the fixture line by line),
 * mapped to the fields the spec and the route schemas give each record: exact counts, every
 * field, every record.
 */

type Row = Record<string, unknown>;
type Page = { data: Row[]; next_cursor: string | null };

let t: TestApp;
let tenant: TenantHandle;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('ingest-read-back');
});
afterAll(async () => {
  await t?.close();
});

const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const byKind = <K extends NormalizedRecord['kind']>(records: NormalizedRecord[], kind: K) =>
  records.filter((r): r is Extract<NormalizedRecord, { kind: K }> => r.kind === kind);
/** Stable sort by a string key (the routes order by a time, then by id, which follows upload order). */
const sortBy = <T>(items: readonly T[], key: (x: T) => string): T[] =>
  items
    .map((x, i) => ({ x, i, k: key(x) }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.i - b.i))
    .map((e) => e.x);
const byExternalId = (rows: Row[]) => sortBy(rows, (r) => String(r.external_id));
const utcDay = (iso: string) => iso.slice(0, 10);
const closeOrNull = (v: number | null, digits = 6) => (v === null ? null : expect.closeTo(v, digits));

/** Follows next_cursor to the end (spec Conventions 1), with a small page so paging is exercised. */
async function readList(url: string, query: Record<string, string> = {}, limit = 50): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const q: Record<string, string> = { ...query, limit: String(limit), ...(cursor ? { cursor } : {}) };
    const res = await t.call('GET', url, { key: tenant.apiKey, query: q });
    expectStatus(res, 200);
    const page = res.json() as Page;
    rows.push(...page.data);
    if (page.next_cursor === null) return rows;
    cursor = page.next_cursor;
  }
  throw new Error(`${url}: more than 1000 pages`);
}

async function getJson(url: string, query: Record<string, string>): Promise<Row> {
  const res = await t.call('GET', url, { key: tenant.apiKey, query });
  expectStatus(res, 200);
  return res.json() as Row;
}

/** The list is in the route's order: by the time field, then by id (spec Reads: Order). */
function expectOrdered(rows: Row[], timeField: string, idField = 'id') {
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1]!;
    const b = rows[i]!;
    const ta = String(a[timeField]);
    const tb = String(b[timeField]);
    expect(ta <= tb && (ta !== tb || Number(a[idField]) <= Number(b[idField])), `${timeField} order at ${i}`).toBe(true);
  }
}

// --------------------------------------------------------------------------------------------
// What each route must answer for a parsed record (spec "Resources and their fields")
// --------------------------------------------------------------------------------------------

type At = string | ReturnType<typeof expect.toBeOneOf>;
const provenance = (r: NormalizedRecord, at: At) => ({ provider: r.provider, source: r.source, device: r.device, ingested_at: at });

/** A record's quality flags as the ETL set them on the way to the log (contracts §15); its parts carry none. */
const quality = (r: NormalizedRecord) => ({ quality: r.quality ?? [] });
/** What every stored record carries beside its own fields: an id, its external id and metadata, its provenance and quality flags. */
const stored = (r: NormalizedRecord, at: At) => ({ id: expect.any(Number), external_id: r.external_id, metadata: json(r.metadata), ...provenance(r, at), ...quality(r) });
/** Records the merged view ranks. */
const RANKED = { is_primary_source: expect.any(Boolean) };
const interval = (r: { start_date: string; end_date: string }) => ({ start_date: r.start_date, end_date: r.end_date });
/** The HealthKit-shaped fields of samples and category samples. */
const sampleFields = (r: QuantityRecord | CategoryRecord) => ({
  ...interval(r),
  source_name: r.source_name,
  source_bundle_id: r.source_bundle_id,
  device_model: r.device_model,
  product_type: r.product_type,
  was_user_entered: r.was_user_entered,
});

const sampleRow = (r: QuantityRecord, at: At) => ({ ...stored(r, at), ...RANKED, ...sampleFields(r), type: r.type, value: r.value, unit: r.unit });

const categoryRow = (r: CategoryRecord, at: At) => ({ ...stored(r, at), ...RANKED, ...sampleFields(r), type: r.type, value: r.value });

const roundOrNull = (v: number | null) => (v === null ? null : Math.round(v));
const roundedStages = (s: StageDurations) => ({
  deep_sleep_seconds: roundOrNull(s.deep_sleep_seconds),
  rem_sleep_seconds: roundOrNull(s.rem_sleep_seconds),
  light_sleep_seconds: roundOrNull(s.light_sleep_seconds),
  awake_seconds: roundOrNull(s.awake_seconds),
});

const sleepRow = (r: SleepSessionRecord, at: At) => ({
  ...stored(r, at),
  ...RANKED,
  bedtime_start: r.bedtime_start,
  bedtime_end: r.bedtime_end,
  total_sleep_seconds: Math.round(r.total_sleep_seconds),
  // An unstaged night reads with null stages (contracts §17), as the sleep projection's rule says.
  ...roundedStages(stageDurations(r)),
  sleep_score: r.sleep_score,
  hrv_avg_ms: r.hrv_avg_ms,
  resting_hr: r.resting_hr,
  respiratory_rate: r.respiratory_rate,
  spo2_avg: r.spo2_avg,
});

const phaseRows = (r: SleepSessionRecord, sessionId: number, at: At) =>
  sortBy(r.phases, (p) => p.start_date).map((p) => ({
    id: expect.any(Number),
    session_id: sessionId,
    phase: p.phase,
    start_date: p.start_date,
    end_date: p.end_date,
    duration_s: (Date.parse(p.end_date) - Date.parse(p.start_date)) / 1000,
    ...provenance(r, at),
  }));

/** Spec-level track summary, computed here independently of the projection: haversine distance, rises, extremes, bbox. */
function trackOf(route: RoutePoint[]) {
  if (route.length === 0) return null;
  const pts = sortBy(route, (p) => p.timestamp);
  const R = 6_371_008.8;
  const rad = (d: number) => (d * Math.PI) / 180;
  let distance = 0;
  for (let i = 1; i < pts.length; i++) {
    const a = pts[i - 1]!;
    const b = pts[i]!;
    const h = Math.sin(rad(b.latitude - a.latitude) / 2) ** 2 + Math.cos(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.sin(rad(b.longitude - a.longitude) / 2) ** 2;
    distance += 2 * R * Math.asin(Math.sqrt(h));
  }
  const alts = pts.map((p) => p.altitude_m).filter((a): a is number => a !== null && Number.isFinite(a));
  let gain = 0;
  for (let i = 1; i < alts.length; i++) gain += Math.max(0, alts[i]! - alts[i - 1]!);
  return {
    points: pts.length,
    distance_m: expect.closeTo(distance, 3),
    elevation_gain_m: alts.length ? expect.closeTo(gain, 6) : null,
    min_altitude_m: alts.length ? Math.min(...alts) : null,
    max_altitude_m: alts.length ? Math.max(...alts) : null,
    bbox: {
      min_latitude: Math.min(...pts.map((p) => p.latitude)),
      min_longitude: Math.min(...pts.map((p) => p.longitude)),
      max_latitude: Math.max(...pts.map((p) => p.latitude)),
      max_longitude: Math.max(...pts.map((p) => p.longitude)),
    },
  };
}

const workoutRow = (r: WorkoutRecord, at: At) => ({
  ...stored(r, at),
  ...RANKED,
  ...interval(r),
  type: r.type,
  duration_s: r.duration_s,
  active_energy_kcal: r.active_energy_kcal,
  distance_m: r.distance_m,
  avg_heart_rate: r.avg_heart_rate,
  max_heart_rate: r.max_heart_rate,
  steps: r.steps,
  track: trackOf(r.route),
});

const routeRows = (r: WorkoutRecord, workoutId: number, at: At) =>
  sortBy(r.route, (p) => p.timestamp).map((p) => ({
    workout_id: workoutId,
    timestamp: p.timestamp,
    latitude: p.latitude,
    longitude: p.longitude,
    altitude_m: p.altitude_m,
    speed_mps: p.speed_mps,
    course_deg: p.course_deg,
    horizontal_accuracy_m: p.horizontal_accuracy_m,
    ...provenance(r, at),
  }));

const nutritionRow = (r: NutritionRecord, at: At) => ({
  ...stored(r, at),
  ...interval(r),
  name: r.name,
  meal_type: r.meal_type,
  energy_kcal: r.energy_kcal,
  protein_g: r.protein_g,
  carbohydrates_g: r.carbohydrates_g,
  fat_g: r.fat_g,
  fiber_g: r.fiber_g,
  sugar_g: r.sugar_g,
  sodium_mg: r.sodium_mg,
  water_ml: r.water_ml,
  nutrients: json(r.nutrients),
});

/** Spec "ECG recording (list form, without voltages)". */
const ecgRow = (r: EcgRecord, at: At) => {
  // The list form has no external id.
  const { external_id: _, ...common } = stored(r, at);
  return {
    ...common,
    ...interval(r),
    classification: r.classification,
    classification_value: r.classification_value,
    symptoms_status: r.symptoms_status,
    average_heart_rate: r.average_heart_rate,
    sampling_frequency_hz: r.sampling_frequency_hz,
    number_of_measurements: r.number_of_measurements,
  };
};

/** Beats in time order with the RR interval ending at each (none for the first beat and after a gap). */
function beatsOf(r: HeartbeatSeriesRecord) {
  const beats = r.beats.map((b, i) => ({ b, i })).sort((x, y) => x.b.offset_s - y.b.offset_s || x.i - y.i).map((x) => x.b);
  return beats.map((b, i) => ({
    timestamp: new Date(Date.parse(r.start_date) + Math.round(b.offset_s * 1000)).toISOString(),
    rr: i === 0 || b.preceded_by_gap ? null : (b.offset_s - beats[i - 1]!.offset_s) * 1000,
    preceded_by_gap: b.preceded_by_gap,
  }));
}

/** RMSSD over successive RR pairs, SDNN the population deviation (the hrv route's documented formulas). */
function hrvOf(rr: (number | null)[]) {
  const values = rr.filter((v): v is number => v !== null);
  const diffs: number[] = [];
  for (let i = 1; i < rr.length; i++) if (rr[i] !== null && rr[i - 1] !== null) diffs.push(rr[i]! - rr[i - 1]!);
  const rmssd = values.length >= 2 && diffs.length ? Math.sqrt(diffs.reduce((s, d) => s + d * d, 0) / diffs.length) : null;
  const mean = values.reduce((s, v) => s + v, 0) / (values.length || 1);
  const sdnn = values.length >= 3 ? Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length) : null;
  return { rmssd, sdnn };
}

const hrvRow = (r: HeartbeatSeriesRecord, at: At) => {
  const beats = beatsOf(r);
  const { rmssd, sdnn } = hrvOf(beats.map((b) => b.rr));
  return {
    series_id: expect.any(Number),
    start_date: beats[0]?.timestamp ?? r.start_date,
    end_date: r.end_date,
    beats: beats.length,
    rmssd_ms: closeOrNull(rmssd, 3),
    sdnn_ms: closeOrNull(sdnn, 3),
    ...provenance(r, at),
    ...quality(r),
  };
};

const rrRows = (r: HeartbeatSeriesRecord, seriesId: number, at: At) =>
  beatsOf(r).map((b) => ({ series_id: seriesId, timestamp: b.timestamp, rr_ms: closeOrNull(b.rr, 3), preceded_by_gap: b.preceded_by_gap, ...provenance(r, at) }));

const dailyRow = (r: DailySummaryRecord, at: At) => ({
  ...stored(r, at),
  ...RANKED,
  date: r.date,
  steps: r.steps,
  active_energy_kcal: r.active_energy_kcal,
  distance_m: r.distance_m,
  resting_heart_rate: r.resting_heart_rate,
  avg_heart_rate: r.avg_heart_rate,
  sleep_seconds: r.sleep_seconds,
});

const cycleRow = (r: MenstrualCycleRecord, at: At) => ({
  ...stored(r, at),
  start_date: r.start_date,
  period_end_date: r.period_end_date,
  period_length_days: r.period_length_days,
  cycle_length_days: r.cycle_length_days,
  flow: json(r.flow),
});

/** Coverage metric of a record: the sample or category type, otherwise the record kind's collection. */
const COVERAGE_METRIC: Record<Exclude<NormalizedRecord['kind'], 'quantity' | 'category'>, string> = {
  sleep_session: 'sleep_sessions',
  workout: 'workouts',
  nutrition: 'nutrition',
  ecg: 'ecg_recordings',
  heartbeat_series: 'heartbeat_series',
  daily_summary: 'daily_summaries',
  menstrual_cycle: 'menstrual_cycles',
  observation: 'observations',
};
const metricOf = (r: NormalizedRecord) => (r.kind === 'quantity' || r.kind === 'category' ? r.type : COVERAGE_METRIC[r.kind]);
/** The UTC day a record counts for (coverage, data.written): its start, a sleep session's bedtime, a summary's own date. */
const dayOf = (r: NormalizedRecord) => (r.kind === 'sleep_session' ? utcDay(r.bedtime_start) : r.kind === 'daily_summary' ? r.date : utcDay(r.start_date));

function expectedCoverageDays(records: NormalizedRecord[], at: At) {
  const days = new Map<string, { provider: string; date: string; records: number; metrics: Record<string, number> }>();
  for (const r of records) {
    const date = dayOf(r);
    const k = `${date}|${r.provider}`;
    let d = days.get(k);
    if (!d) days.set(k, (d = { provider: r.provider, date, records: 0, metrics: {} }));
    d.records++;
    const m = metricOf(r);
    d.metrics[m] = (d.metrics[m] ?? 0) + 1;
  }
  return sortBy([...days.values()], (d) => `${d.date}|${d.provider}`).map((d) => ({ ...d, last_synced_at: at }));
}

/** samples/stats buckets of one type per UTC day, one series per provider, source and unit (spec "Sample statistics"). */
function expectedStats(samples: QuantityRecord[]) {
  const buckets = new Map<string, { day: string; provider: string; source: string; unit: string; values: number[] }>();
  for (const s of samples) {
    const day = utcDay(s.start_date);
    const k = [day, s.provider, s.source, s.unit].join('|');
    let b = buckets.get(k);
    if (!b) buckets.set(k, (b = { day, provider: s.provider, source: s.source, unit: s.unit, values: [] }));
    b.values.push(s.value);
  }
  return sortBy([...buckets.values()], (b) => [b.day, b.provider, b.source, b.unit].join('\u0000')).map((b) => {
    const sum = b.values.reduce((a, v) => a + v, 0);
    return {
      start: `${b.day}T00:00:00+00:00`,
      provider: b.provider,
      source: b.source,
      unit: b.unit,
      count: b.values.length,
      sum: expect.closeTo(sum, 6),
      avg: expect.closeTo(sum / b.values.length, 6),
      min: Math.min(...b.values),
      max: Math.max(...b.values),
    };
  });
}

const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

// --------------------------------------------------------------------------------------------
// Reading everything back
// --------------------------------------------------------------------------------------------

type Snapshot = {
  samples: Map<string, Row[]>;
  stats: Map<string, Row>;
  category: Row[];
  sleep: Row[];
  phases: Map<string, Row[]>;
  workouts: Row[];
  routes: Map<string, Row[]>;
  nutrition: Row[];
  daily: Row[];
  hrv: Row[];
  rr: Row[];
  rrBySeries: Map<number, Row[]>;
  cycles: Row[];
  ecg: Row[];
  coverage: Coverage;
};

/** Every read route of spec "Reads" for the user, view=all where the route takes a view. */
async function readEverything(userId: string, sampleTypes: string[]): Promise<Snapshot> {
  const base = `/v1/users/${userId}`;
  const all = { view: 'all' };
  const samples = new Map<string, Row[]>();
  const stats = new Map<string, Row>();
  for (const type of sampleTypes) {
    const rows = await readList(`${base}/samples`, { type, ...all });
    samples.set(type, rows);
    const days = rows.map((r) => utcDay(String(r.start_date))).sort();
    const start = days[0] ?? '2026-01-01';
    const end = nextDay(days[days.length - 1] ?? start);
    stats.set(type, await getJson(`${base}/samples/stats`, { type, start, end, interval: 'day', tz: 'UTC', ...all }));
  }
  const sleep = await readList(`${base}/sleep`, all);
  const phases = new Map<string, Row[]>();
  for (const s of sleep) phases.set(String(s.external_id), await readList(`${base}/sleep/${String(s.id)}/phases`, {}, 3));
  const workouts = await readList(`${base}/workouts`, all);
  const routes = new Map<string, Row[]>();
  for (const w of workouts) routes.set(String(w.external_id), await readList(`${base}/workouts/${String(w.id)}/route`, {}, 4));
  const hrv = await readList(`${base}/hrv`);
  const rrBySeries = new Map<number, Row[]>();
  for (const h of hrv) rrBySeries.set(Number(h.series_id), await readList(`${base}/rr-intervals`, { series_id: String(h.series_id) }, 4));
  const coverageRes = await t.call('GET', `${base}/coverage`, { key: tenant.apiKey, query: all });
  expectStatus(coverageRes, 200);
  return {
    samples,
    stats,
    category: await readList(`${base}/category-samples`, all),
    sleep,
    phases,
    workouts,
    routes,
    nutrition: await readList(`${base}/nutrition`),
    daily: await readList(`${base}/daily`, all),
    hrv,
    rr: await readList(`${base}/rr-intervals`, {}, 4),
    rrBySeries,
    cycles: await readList(`${base}/menstrual-cycles`),
    ecg: await readList(`${base}/ecg`),
    coverage: coverageRes.json() as Coverage,
  };
}

/** Record for record: exact counts, every field of every record, in the routes' orders. */
function expectMatches(snap: Snapshot, records: NormalizedRecord[], rejected: RejectedItem[], at: At) {
  // Quantity samples, per type present (spec "Quantity sample"; Reads rule 1).
  const quantities = byKind(records, 'quantity');
  const types = [...new Set(quantities.map((q) => q.type))].sort();
  expect([...snap.samples.keys()].sort()).toEqual(types);
  for (const type of types) {
    const rows = snap.samples.get(type)!;
    const expected = quantities.filter((q) => q.type === type);
    expect(rows, `samples of ${type}`).toHaveLength(expected.length);
    expect(byExternalId(rows), `samples of ${type}`).toEqual(byExternalId(expected.map((q) => sampleRow(q, at)) as Row[]));
    expectOrdered(rows, 'start_date');
    for (const row of rows) {
      // Stored in the storage unit of the type (contracts §4), metadata with the timezone (spec "Quantity sample").
      const catalog = findQuantityType(type);
      if (catalog) expect(row.unit, `unit of ${type}`).toBe(catalog.unit);
      expect(row.metadata, `metadata of sample ${String(row.external_id)}`).toHaveProperty('timezone');
    }
    // samples/stats: one series per provider, source and unit, per UTC day (spec "Sample statistics"; Reads rule 2).
    const stats = snap.stats.get(type)!;
    const days = expected.map((q) => utcDay(q.start_date)).sort();
    expect(stats, `stats of ${type}`).toEqual({
      type,
      interval: 'day',
      tz: 'UTC',
      view: 'all',
      start: `${days[0]}T00:00:00+00:00`,
      end: `${nextDay(days[days.length - 1]!)}T00:00:00+00:00`,
      truncated: false,
      // Statistics leave out samples flagged implausible or future (contracts §15).
      buckets: expectedStats(expected.filter((q) => !leavesOut(q.quality))),
    });
  }

  // Category samples (all types at once).
  const categories = byKind(records, 'category');
  expect(snap.category).toHaveLength(categories.length);
  expect(byExternalId(snap.category)).toEqual(byExternalId(categories.map((c) => categoryRow(c, at)) as Row[]));
  expectOrdered(snap.category, 'start_date');

  // Sleep sessions and their phases.
  const sessions = byKind(records, 'sleep_session');
  expect(snap.sleep).toHaveLength(sessions.length);
  expect(byExternalId(snap.sleep)).toEqual(byExternalId(sessions.map((s) => sleepRow(s, at)) as Row[]));
  expectOrdered(snap.sleep, 'bedtime_start');
  const phaseIds: number[] = [];
  for (const s of sessions) {
    const row = snap.sleep.find((r) => r.external_id === s.external_id)!;
    const phases = snap.phases.get(s.external_id)!;
    expect(phases, `phases of ${s.external_id}`).toEqual(phaseRows(s, Number(row.id), at));
    phaseIds.push(...phases.map((p) => Number(p.id)));
  }
  expect(new Set(phaseIds).size).toBe(phaseIds.length);

  // Workouts, their track summaries and routes.
  const workouts = byKind(records, 'workout');
  expect(snap.workouts).toHaveLength(workouts.length);
  expect(byExternalId(snap.workouts)).toEqual(byExternalId(workouts.map((w) => workoutRow(w, at)) as Row[]));
  expectOrdered(snap.workouts, 'start_date');
  for (const w of workouts) {
    const row = snap.workouts.find((r) => r.external_id === w.external_id)!;
    expect(snap.routes.get(w.external_id), `route of ${w.external_id}`).toEqual(routeRows(w, Number(row.id), at));
  }

  // Nutrition, ECG (list form: no voltages), daily summaries, menstrual cycles.
  const nutrition = byKind(records, 'nutrition');
  expect(byExternalId(snap.nutrition)).toEqual(byExternalId(nutrition.map((n) => nutritionRow(n, at)) as Row[]));
  expectOrdered(snap.nutrition, 'start_date');
  const ecgs = byKind(records, 'ecg');
  for (const e of ecgs) expect(e.number_of_measurements).toBe(e.voltages.length);
  expect(byExternalId(snap.ecg)).toEqual(byExternalId(ecgs.map((e) => ecgRow(e, at)) as Row[]));
  expectOrdered(snap.ecg, 'start_date');
  const dailies = byKind(records, 'daily_summary');
  expect(byExternalId(snap.daily)).toEqual(byExternalId(dailies.map((d) => dailyRow(d, at)) as Row[]));
  expectOrdered(snap.daily, 'date');
  const cycles = byKind(records, 'menstrual_cycle');
  expect(byExternalId(snap.cycles)).toEqual(byExternalId(cycles.map((c) => cycleRow(c, at)) as Row[]));
  expectOrdered(snap.cycles, 'start_date');

  // Heartbeat series: one HRV row per series, one RR row per beat.
  const series = sortBy(byKind(records, 'heartbeat_series'), (s) => beatsOf(s)[0]?.timestamp ?? s.start_date);
  expect(snap.hrv).toEqual(series.map((s) => hrvRow(s, at)));
  expectOrdered(snap.hrv, 'start_date', 'series_id');
  const allBeats: Row[] = [];
  series.forEach((s, i) => {
    const seriesId = Number(snap.hrv[i]!.series_id);
    const expected = rrRows(s, seriesId, at);
    expect(snap.rrBySeries.get(seriesId), `rr-intervals of series ${seriesId}`).toEqual(expected);
    allBeats.push(...(expected as Row[]));
  });
  expect(snap.rr).toHaveLength(allBeats.length);
  expect(sortBy(snap.rr, (r) => String(r.timestamp))).toEqual(sortBy(allBeats, (r) => String(r.timestamp)));
  expectOrdered(snap.rr, 'timestamp', 'series_id');

  // Coverage: per provider and UTC day, every record once by metric; rejected lines each once.
  expect(snap.coverage).toEqual({
    pending_jobs: 0,
    parked_jobs: 0,
    rejected_records: new Set(rejected.map((r) => `${r.reason}\u0000${r.excerpt}`)).size,
    flagged_records: records.filter((r) => leavesOut(r.quality)).length,
    truncated: false,
    days: expectedCoverageDays(records, at),
  });
}

/** Ids of the top-level records of every route, by external id (a re-upload must keep them). */
function idsOf(snap: Snapshot): Record<string, Record<string, unknown>> {
  const ids = (rows: Row[], idField = 'id') => Object.fromEntries(rows.map((r) => [String(r.external_id ?? r.start_date), r[idField]]));
  return {
    ...Object.fromEntries([...snap.samples].map(([type, rows]) => [`samples:${type}`, ids(rows)])),
    category: ids(snap.category),
    sleep: ids(snap.sleep),
    workouts: ids(snap.workouts),
    nutrition: ids(snap.nutrition),
    daily: ids(snap.daily),
    cycles: ids(snap.cycles),
    ecg: ids(snap.ecg),
    hrv: ids(snap.hrv, 'series_id'),
  };
}

// --------------------------------------------------------------------------------------------
// The device kinds
// --------------------------------------------------------------------------------------------

type Case = { slug: string; label: string; payload: () => Buffer; gzipEncoded?: boolean };
const CASES: Case[] = [
  { slug: 'device-a', label: 'device-a (iOS HealthKit: the NDJSON fixture, gzipped, multipart)', payload: fixtureA },
  { slug: 'device-b', label: 'device-b (Health Connect: upload.json as application/json)', payload: fixtureB },
  { slug: 'device-b', label: 'device-b (Health Connect: upload.json with Content-Encoding: gzip)', payload: fixtureBGzip, gzipEncoded: true },
  { slug: 'device-c', label: 'device-c (Gadgetbridge database export)', payload: fixtureC },
];

type Uploaded = { userId: string; uploadId: string; acceptedAt: string; records: NormalizedRecord[]; rejected: RejectedItem[]; snap: Snapshot };

async function uploadAndRead(c: Case, payload = c.payload(), existing?: { userId: string; token: string }): Promise<Uploaded & { token: string }> {
  let userId: string;
  let token: string;
  if (existing) ({ userId, token } = existing);
  else {
    userId = (await t.createUser(tenant.apiKey)).id;
    token = (await t.mintToken(tenant.apiKey, userId, { scopes: ['upload'] })).token;
  }
  const uploadId = `rb-${randomUUID()}`;
  const res = await postUpload(t, c.slug, token, uploadId, requestFor(c.slug, payload, { gzipEncoded: c.gzipEncoded }));
  expectStatus(res, 202);
  await waitForEtl(t, tenant.apiKey, userId);
  const events = await t.ctx.eventStore.readStream(uploadStream(userId, c.slug, uploadId));
  const acceptedAt = (events.find((e) => e.type === 'upload.accepted')!.data as { accepted_at: string }).accepted_at;
  const { records, rejected } = await parsePayload(c.slug, payload);
  const sampleTypes = [...new Set(byKind(records, 'quantity').map((q) => q.type))].sort();
  const snap = await readEverything(userId, sampleTypes);
  return { userId, token, uploadId, acceptedAt, records, rejected, snap };
}

describe('an upload of each device kind reads back through every read route record for record (issue acceptance; contracts §3; spec Reads)', { timeout: 120_000 }, () => {
  for (const c of CASES) {
    describe(c.label, () => {
      let u: Uploaded;
      beforeAll(async () => {
        u = await uploadAndRead(c);
      }, 120_000);

      it('the fixture yields records of several kinds and some rejected lines (the test reads something)', () => {
        expect(u.records.length).toBeGreaterThan(20);
        expect(u.rejected.length).toBeGreaterThan(0);
        // external_id is the key of an update (records.ts): unique per kind within a fixture.
        const keys = u.records.map((r) => `${r.kind}|${r.external_id}`);
        expect(new Set(keys).size).toBe(keys.length);
      });

      it('every read route answers exactly the parsed records: values, units, times, provenance (provider, source, device, ingested_at = acceptance), external_id and metadata (spec Resources; Reads; contracts §3)', () => {
        expectMatches(u.snap, u.records, u.rejected, u.acceptedAt);
      });

      if (c.slug === 'device-a') {
        it('keeps what arrived in metadata.original_value and metadata.original_unit of every sample, the value served in the storage unit (contracts §3 device-a; spec Quantity sample)', () => {
          const quantities = byKind(u.records, 'quantity');
          for (const [type, rows] of u.snap.samples) {
            for (const row of rows) {
              const sent = quantities.find((q) => q.external_id === row.external_id)!;
              expect(row.metadata, `${type} ${String(row.external_id)}`).toMatchObject({ original_value: sent.metadata.original_value, original_unit: sent.metadata.original_unit });
              expect(typeof (row.metadata as Record<string, unknown>).original_value).toBe('number');
              expect(typeof (row.metadata as Record<string, unknown>).original_unit).toBe('string');
            }
          }
        });
      }

      it("counts the upload's rejected lines in coverage.rejected_records, each once, and keeps them for inspection (contracts §3; spec Coverage report)", async () => {
        const distinct = new Set(u.rejected.map((r) => `${r.reason}\u0000${r.excerpt}`)).size;
        expect(u.snap.coverage.rejected_records).toBe(distinct);
        const kept = await t.ctx.readStore.find<{ _id: string; location: string; reason: string; excerpt: string; provider: string }>('rejected_records', { filter: { user_id: u.userId } });
        expect(sortBy(kept.map((k) => ({ location: k.location, reason: k.reason, excerpt: k.excerpt, provider: k.provider })), (k) => k.location)).toEqual(
          sortBy(
            u.rejected.map((r) => ({ location: r.location, reason: r.reason, excerpt: r.excerpt, provider: c.slug })),
            (k) => k.location,
          ),
        );
      });

      it('appends one data.written event with the counts per kind, the types and the first and last day of what was written (spec Events: data.written; Sync run: records written are announced by data.written)', async () => {
        const events = await t.ctx.eventStore.readStream(uploadStream(u.userId, c.slug, u.uploadId));
        const written = events.filter((e) => e.type === 'data.written');
        expect(written).toHaveLength(1);
        const counts: Record<string, number> = {};
        for (const r of u.records) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
        const days = u.records.map(dayOf).sort();
        expect(written[0]!.data).toEqual({
          user_id: u.userId,
          tenant_id: tenant.id,
          provider: c.slug,
          records: counts,
          types: [...new Set(u.records.map((r) => (r.kind === 'quantity' || r.kind === 'category' ? r.type : r.kind)))].sort(),
          first_day: days[0],
          last_day: days[days.length - 1],
        });
        // The job ended done, with the same counts (spec ETL job; Pipeline).
        const succeeded = events.filter((e) => e.type === 'etl.job_succeeded');
        expect(succeeded).toHaveLength(1);
        expect(succeeded[0]!.data).toMatchObject({ records: counts, rejected: u.rejected.length });
      });
    });
  }
});

describe('re-uploading the same records under a new Upload-Id updates them instead of duplicating (records.ts external_id; contracts §3)', { timeout: 120_000 }, () => {
  it('device-a: the same records, one value changed, keep their ids and counts; the change shows', async () => {
    const c = CASES[0]!;
    const first = await uploadAndRead(c);
    expectMatches(first.snap, first.records, first.rejected, first.acceptedAt);

    // The same export again with the first heart rate corrected from 72 to 74 count/min.
    const changedId = 'E1A7D3C2-0B4F-4F6E-9A01-000000000001';
    const lines = FIXTURE_A_NDJSON.split('\n').map((line) => {
      if (!line.includes(changedId)) return line;
      const o = JSON.parse(line) as { value: number };
      expect(o.value).toBe(72);
      return JSON.stringify({ ...o, value: 74 });
    });
    const second = await uploadAndRead(c, gzipSync(lines.join('\n')), { userId: first.userId, token: first.token });
    expect(second.uploadId).not.toBe(first.uploadId);
    expect(second.records).toHaveLength(first.records.length);

    // Every route answers the second parse, record for record: nothing duplicated.
    expectMatches(second.snap, second.records, second.rejected, expect.toBeOneOf([first.acceptedAt, second.acceptedAt]));
    expect(idsOf(second.snap)).toEqual(idsOf(first.snap));
    expect(second.snap.coverage.rejected_records).toBe(first.snap.coverage.rejected_records);
    expect(second.snap.coverage.days.map(({ provider, date, records, metrics }) => ({ provider, date, records, metrics }))).toEqual(
      first.snap.coverage.days.map(({ provider, date, records, metrics }) => ({ provider, date, records, metrics })),
    );
    const hr = second.snap.samples.get('heart_rate')!.find((r) => r.external_id === changedId)!;
    expect(hr).toMatchObject({ value: 74, metadata: { original_value: 74, original_unit: 'count/min' } });
  });

  it('device-b then device-b gzipped: the same records through the other encoding keep their ids and counts', async () => {
    const first = await uploadAndRead(CASES[1]!);
    const second = await uploadAndRead(CASES[2]!, fixtureBGzip(), { userId: first.userId, token: first.token });
    expectMatches(second.snap, second.records, second.rejected, expect.toBeOneOf([first.acceptedAt, second.acceptedAt]));
    expect(idsOf(second.snap)).toEqual(idsOf(first.snap));
    expect(second.snap.coverage.rejected_records).toBe(first.snap.coverage.rejected_records);
  });
});
