import { mulberry32 } from '../../../shared/seededRandom.js';
import type { CategoryRecord, NormalizedRecord, Provenance, QuantityRecord, SleepPhase, SleepSessionRecord, WorkoutRecord } from '../../../../commands/ingestion/records.js';

export const DEMO_PERSONAS = ['mix', 'runner', 'sleep', 'weight'] as const;
export type DemoPersona = (typeof DEMO_PERSONAS)[number];

/** The provider every synthetic record comes through; its sources are the vendors it imitates. */
export const DEMO_PROVIDER = 'demo';

const DAY_MS = 86_400_000;
const MIN_MS = 60_000;

const rng = mulberry32;

function seedOf(...parts: (string | number)[]): number {
  let h = 2166136261;
  for (const c of parts.join('\u0000')) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return h >>> 0;
}

/** Normal deviate (Box–Muller) from a uniform generator. */
const gauss = (r: () => number) => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
const round = (v: number, digits = 0) => Math.round(v * 10 ** digits) / 10 ** digits;
const iso = (ms: number) => new Date(ms).toISOString();

type Source = Provenance & { bundle: string; model: string };
const WATCH: Source = { provider: DEMO_PROVIDER, source: 'apple', device: 'Demo Watch', body_worn: true, bundle: 'com.apple.health', model: 'Watch' };
const RING: Source = { provider: DEMO_PROVIDER, source: 'oura', device: 'Demo Ring', body_worn: true, bundle: 'com.ouraring.oura', model: 'Ring' };
const SCALE: Source = { provider: DEMO_PROVIDER, source: 'withings', device: 'Demo Scale', body_worn: false, bundle: 'com.withings.wiscaleNG', model: 'Body+' };

const provenance = (s: Source): Provenance => ({ provider: s.provider, source: s.source, device: s.device, body_worn: s.body_worn });
/** The fields samples carry about the device that measured them. */
const deviceFields = (s: Source) => ({ source_name: s.device, source_bundle_id: s.bundle, device_model: s.model, product_type: null, was_user_entered: false });
const meta = (persona: DemoPersona) => ({ synthetic: true, demo_persona: persona, timezone: 'UTC' });

/** What shapes a persona's days: baselines the generator varies around. */
type Profile = { restingHr: number; hrvMs: number; stepsPerHour: number; massKg: number; massTrendKgPerDay: number; fatPct: number; sleepNeedMin: number; sleepSpreadMin: number };
const PROFILES: Record<DemoPersona, Profile> = {
  mix: { restingHr: 60, hrvMs: 45, stepsPerHour: 520, massKg: 74, massTrendKgPerDay: -0.01, fatPct: 21, sleepNeedMin: 450, sleepSpreadMin: 35 },
  runner: { restingHr: 48, hrvMs: 72, stepsPerHour: 650, massKg: 66, massTrendKgPerDay: 0, fatPct: 12, sleepNeedMin: 480, sleepSpreadMin: 25 },
  sleep: { restingHr: 64, hrvMs: 38, stepsPerHour: 420, massKg: 70, massTrendKgPerDay: 0, fatPct: 24, sleepNeedMin: 420, sleepSpreadMin: 80 },
  weight: { restingHr: 70, hrvMs: 32, stepsPerHour: 380, massKg: 96, massTrendKgPerDay: -0.07, fatPct: 33, sleepNeedMin: 430, sleepSpreadMin: 40 },
};

/** The runner's week: minutes of running and intensity (0..1) by weekday (0 = Sunday); every 4th week eases off. */
const RUNNER_WEEK: readonly { minutes: number; intensity: number; label: string }[] = [
  { minutes: 45, intensity: 0.35, label: 'easy run' },
  { minutes: 0, intensity: 0, label: 'rest' },
  { minutes: 55, intensity: 0.85, label: 'intervals' },
  { minutes: 40, intensity: 0.3, label: 'easy run' },
  { minutes: 50, intensity: 0.7, label: 'tempo run' },
  { minutes: 0, intensity: 0, label: 'rest' },
  { minutes: 100, intensity: 0.5, label: 'long run' },
];

type Workout = { start: number; end: number; type: string; intensity: number; label: string };

/** Training load of a day (minutes × intensity), the basis of the next night's recovery. */
function plannedWorkout(persona: DemoPersona, dayMs: number, r: () => number): Workout | null {
  const weekday = new Date(dayMs).getUTCDay();
  const week = Math.floor(dayMs / (7 * DAY_MS));
  if (persona === 'runner') {
    const plan = RUNNER_WEEK[weekday]!;
    if (plan.minutes === 0) return null;
    const minutes = plan.minutes * (week % 4 === 3 ? 0.6 : 1) * (0.9 + 0.2 * r());
    const start = dayMs + (17 * 60 + Math.floor(r() * 90)) * MIN_MS;
    return { start, end: start + Math.round(minutes) * MIN_MS, type: 'running', intensity: plan.intensity, label: plan.label };
  }
  if (persona === 'mix' && (weekday === 2 || weekday === 4 || weekday === 6)) {
    const start = dayMs + (18 * 60 + Math.floor(r() * 60)) * MIN_MS;
    return { start, end: start + (35 + Math.floor(r() * 25)) * MIN_MS, type: weekday === 6 ? 'cycling' : 'walking', intensity: 0.4, label: 'after work' };
  }
  if (persona === 'weight' && (weekday === 1 || weekday === 3 || weekday === 5)) {
    const start = dayMs + (7 * 60 + 30 + Math.floor(r() * 30)) * MIN_MS;
    return { start, end: start + (30 + Math.floor(r() * 15)) * MIN_MS, type: 'walking', intensity: 0.3, label: 'brisk walk' };
  }
  return null;
}

const loadOf = (w: Workout | null) => (w ? ((w.end - w.start) / MIN_MS) * w.intensity : 0);

/**
 * Sleep architecture: ~90-minute cycles of light → deep → light → REM, deep sleep front-loaded and
 * REM growing towards morning, short awakenings between cycles; a poor night fragments more.
 */
function sleepPhases(start: number, end: number, r: () => number, quality: number): SleepPhase[] {
  const phases: SleepPhase[] = [];
  let t = start;
  const push = (phase: SleepPhase['phase'], minutes: number) => {
    const until = Math.min(end, t + Math.max(1, Math.round(minutes)) * MIN_MS);
    if (until > t) phases.push({ phase, start_date: iso(t), end_date: iso(until) });
    t = until;
  };
  push('awake', 5 + r() * 15 * (1.5 - quality));
  for (let cycle = 0; t < end; cycle++) {
    const length = 85 + r() * 20;
    const deep = Math.max(0, (42 - cycle * 15) * (0.6 + 0.5 * quality) + gauss(r) * 3);
    const rem = Math.min(50, 6 + cycle * 10 + gauss(r) * 3);
    const light = Math.max(10, length - deep - rem);
    push('light', light * 0.55);
    if (deep > 2) push('deep', deep);
    push('light', light * 0.45);
    push('rem', rem);
    if (r() > 0.55 + quality * 0.35) push('awake', 2 + r() * 10);
  }
  return phases;
}

const minutesOf = (phases: SleepPhase[], kind: SleepPhase['phase']) =>
  phases.filter((p) => p.phase === kind).reduce((s, p) => s + (Date.parse(p.end_date) - Date.parse(p.start_date)) / 1000, 0);

/** Days a weight trend runs before it levels off (a diet does not go on for ever). */
const TREND_DAYS = 180;

/**
 * One UTC day of a persona: every record the day holds, from every source the persona wears.
 * Deterministic in (seed, persona, day, anchor): regenerating a day yields the same records, with
 * the same external ids, so the store keeps one copy. `anchorDay` (the user's first demo day
 * reference: the day the user was created) is where slow trends are measured from; the weight
 * trend starts 90 days before it, so any window of demo days shows it, and levels off later.
 */
export function demoDay(persona: DemoPersona, day: string, seed: string, anchorDay = day): NormalizedRecord[] {
  const dayMs = Date.parse(`${day}T00:00:00Z`);
  const r = rng(seedOf(seed, persona, day));
  const p = PROFILES[persona];
  const m = meta(persona);
  const out: NormalizedRecord[] = [];
  const dayIndex = Math.floor(dayMs / DAY_MS);
  const trendDays = Math.min(TREND_DAYS, Math.max(0, dayIndex - Math.floor(Date.parse(`${anchorDay}T00:00:00Z`) / DAY_MS) + 90));

  // Yesterday's training shows in tonight's recovery: higher resting HR, lower HRV.
  const yesterday = plannedWorkout(persona, dayMs - DAY_MS, rng(seedOf(seed, persona, 'workout', dayIndex - 1)));
  const fatigue = Math.min(1, loadOf(yesterday) / 60);
  const restingHr = p.restingHr + fatigue * 4 + gauss(r) * 1.5;
  const hrv = p.hrvMs * (1 - fatigue * 0.25) * (1 + gauss(r) * 0.08);
  const workout = plannedWorkout(persona, dayMs, rng(seedOf(seed, persona, 'workout', dayIndex)));

  const quantity = (s: Source, type: string, unit: string, value: number, start: number, end = start): QuantityRecord => ({
    kind: 'quantity',
    ...provenance(s),
    external_id: `demo:${s.source}:${type}:${iso(start)}`,
    type,
    value,
    unit,
    start_date: iso(start),
    end_date: iso(end),
    ...deviceFields(s),
    metadata: m,
  });

  // Night: asleep from a little after midnight to the morning (UTC), longer after hard days.
  const quality = persona === 'sleep' ? Math.max(0.1, Math.min(1, 0.6 + gauss(r) * 0.3)) : Math.max(0.4, Math.min(1, 0.85 + gauss(r) * 0.1));
  // Never before midnight: a night that began the day before would put a record on a day the
  // caller did not ask for (spec "Instance admin routes", demo user: the given days).
  const sleepStart = dayMs + Math.max(1, Math.round(15 + r() * 60 + gauss(r) * (p.sleepSpreadMin / 3))) * MIN_MS;
  const sleepMinutes = p.sleepNeedMin * (0.8 + 0.2 * quality) + fatigue * 20 + gauss(r) * p.sleepSpreadMin;
  const sleepEnd = sleepStart + Math.round(Math.max(300, Math.min(600, sleepMinutes))) * MIN_MS;
  const asleep = (t: number) => t >= sleepStart && t < sleepEnd;

  /** Circadian heart rate: lowest in the small hours, a day-time plateau, a dip after lunch; workouts on top. */
  const heartRate = (t: number) => {
    const hour = (t - dayMs) / 3_600_000;
    if (asleep(t)) return restingHr - 3 + 2 * Math.sin(((t - sleepStart) / (sleepEnd - sleepStart)) * Math.PI * 4) + gauss(r);
    if (workout && t >= workout.start && t < workout.end) {
      const into = (t - workout.start) / (workout.end - workout.start);
      const target = restingHr + (200 - 0.7 * 35 - restingHr) * (0.5 + 0.45 * workout.intensity);
      const ramp = Math.min(1, into * 6);
      const intervals = workout.label === 'intervals' ? 12 * Math.sin(into * Math.PI * 16) : 0;
      return restingHr + (target - restingHr) * ramp + intervals + gauss(r) * 3;
    }
    const circadian = 14 + 8 * Math.sin(((hour - 9) / 24) * 2 * Math.PI) - (hour > 13 && hour < 15 ? 4 : 0);
    return restingHr + circadian + Math.abs(gauss(r)) * 6;
  };

  // Heart rate from the watch every 5 minutes (every 15 for the weight persona's older watch).
  const every = persona === 'weight' ? 15 : 5;
  for (let t = dayMs; t < dayMs + DAY_MS; t += every * MIN_MS) out.push(quantity(WATCH, 'heart_rate', 'count/min', round(heartRate(t)), t));
  // `mix` also wears a ring: its readings fall within minutes of the watch's, so the merged view has to choose.
  if (persona === 'mix') {
    for (let t = dayMs + 2 * MIN_MS; t < dayMs + DAY_MS; t += 10 * MIN_MS) out.push(quantity(RING, 'heart_rate', 'count/min', round(heartRate(t) + gauss(r) * 2), t));
  }

  // Steps per waking hour; more on workout days.
  for (let h = 0; h < 24; h++) {
    const start = dayMs + h * 3_600_000;
    if (asleep(start) && asleep(start + 3_599_999)) continue;
    const activity = h < 7 ? 0.2 : h < 9 ? 1.2 : h < 12 ? 0.8 : h < 14 ? 1.1 : h < 18 ? 0.7 : h < 21 ? 0.9 : 0.3;
    let steps = p.stepsPerHour * activity * (0.6 + 0.8 * r());
    if (workout && workout.start < start + 3_600_000 && workout.end > start) steps += workout.type === 'cycling' ? 0 : 2400 * workout.intensity + 1800;
    out.push(quantity(WATCH, 'step_count', 'count', Math.round(steps), start, start + 3_600_000));
    out.push(quantity(WATCH, 'active_energy_burned', 'kcal', round(steps * 0.045 + r() * 5, 1), start, start + 3_600_000));
  }

  // Nightly values: resting heart rate, HRV, breathing and oxygen, from the ring for `mix` as well.
  const nightly = [WATCH, ...(persona === 'mix' ? [RING] : [])];
  for (const s of nightly) {
    const wake = sleepEnd + (s === RING ? 60_000 : 0);
    out.push(quantity(s, 'resting_heart_rate', 'count/min', round(restingHr + gauss(r) * 0.8), wake));
    out.push(quantity(s, 'hrv_rmssd', 'ms', round(hrv + gauss(r) * 2, 1), wake));
    out.push(quantity(s, 'respiratory_rate', 'count/min', round(14.5 + gauss(r) * 0.6, 1), wake));
    out.push(quantity(s, 'oxygen_saturation', '%', round(Math.min(100, 96.5 + gauss(r) * 0.8), 1), wake));
  }

  // Sleep sessions with their phases; for `mix` the watch and the ring both record the night.
  const sleepSources = persona === 'mix' ? [RING, WATCH] : [persona === 'sleep' ? RING : WATCH];
  for (const s of sleepSources) {
    const offset = s === WATCH && persona === 'mix' ? Math.round(gauss(r) * 6) * MIN_MS : 0;
    const start = Math.max(dayMs + MIN_MS, sleepStart + offset);
    const end = sleepEnd + offset;
    const phases = sleepPhases(start, end, rng(seedOf(seed, persona, day, s.source)), quality);
    const deep = minutesOf(phases, 'deep');
    const rem = minutesOf(phases, 'rem');
    const light = minutesOf(phases, 'light');
    const awake = minutesOf(phases, 'awake');
    const session: SleepSessionRecord = {
      kind: 'sleep_session',
      ...provenance(s),
      external_id: `demo:${s.source}:sleep:${day}`,
      bedtime_start: iso(start),
      bedtime_end: iso(end),
      total_sleep_seconds: Math.round(deep + rem + light),
      deep_sleep_seconds: Math.round(deep),
      rem_sleep_seconds: Math.round(rem),
      light_sleep_seconds: Math.round(light),
      awake_seconds: Math.round(awake),
      sleep_score: s === RING ? Math.round(Math.max(30, Math.min(98, 55 + quality * 40 + gauss(r) * 3))) : null,
      hrv_avg_ms: round(hrv, 1),
      resting_hr: round(restingHr, 1),
      respiratory_rate: round(14.5 + gauss(r) * 0.5, 1),
      spo2_avg: round(96.5 + gauss(r) * 0.5, 1),
      phases,
      metadata: m,
    };
    out.push(session);
    for (const ph of phases) {
      const sleepCategory: CategoryRecord = {
        kind: 'category',
        ...provenance(s),
        external_id: `demo:${s.source}:sleep_analysis:${ph.start_date}`,
        type: 'sleep_analysis',
        value: ph.phase === 'awake' ? 'awake' : `asleep_${ph.phase === 'light' ? 'core' : ph.phase}`,
        start_date: ph.start_date,
        end_date: ph.end_date,
        ...deviceFields(s),
        metadata: m,
      };
      if (s === WATCH) out.push(sleepCategory);
    }
  }

  if (workout) {
    const minutes = (workout.end - workout.start) / MIN_MS;
    const hrs: number[] = [];
    for (let t = workout.start; t < workout.end; t += MIN_MS) hrs.push(heartRate(t));
    const speed = workout.type === 'running' ? 2.6 + workout.intensity * 1.6 : workout.type === 'cycling' ? 6.5 : 1.5;
    const w: WorkoutRecord = {
      kind: 'workout',
      ...provenance(WATCH),
      external_id: `demo:${WATCH.source}:workout:${iso(workout.start)}`,
      type: workout.type,
      start_date: iso(workout.start),
      end_date: iso(workout.end),
      duration_s: minutes * 60,
      active_energy_kcal: round(minutes * (5 + 9 * workout.intensity), 1),
      distance_m: round(minutes * 60 * speed * (0.95 + 0.1 * r())),
      avg_heart_rate: round(hrs.reduce((a, b) => a + b, 0) / hrs.length),
      max_heart_rate: round(Math.max(...hrs)),
      steps: workout.type === 'cycling' ? null : Math.round(minutes * (workout.type === 'running' ? 165 : 110)),
      route: [],
      metadata: { ...m, session: workout.label },
    };
    out.push(w);
  }

  // Weighed every morning (the weight persona) or about twice a week; a trend plus water swings.
  if (persona === 'weight' || r() < 0.3) {
    const t = sleepEnd + 15 * MIN_MS;
    const mass = p.massKg + p.massTrendKgPerDay * trendDays + 0.35 * Math.sin((dayIndex / 7) * 2 * Math.PI) + gauss(r) * 0.25;
    out.push(quantity(SCALE, 'body_mass', 'kg', round(mass, 2), t));
    out.push(quantity(SCALE, 'body_fat_percentage', '%', round(p.fatPct + (p.massTrendKgPerDay * trendDays) / 3 + gauss(r) * 0.4, 1), t));
  }
  return out;
}
