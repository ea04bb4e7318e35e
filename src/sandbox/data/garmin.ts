import { createHash } from 'node:crypto';
import type { DataHandler } from '../sandboxTypes.js';
import { BACKFILL_MAX_SECONDS, BACKFILL_PATH } from '../../sources/providers/garmin/history.js';
import { GARMIN_USER_ID_PATH } from '../../sources/providers/garmin/userId.js';
import type { SummaryType } from '../../sources/providers/garmin/vocabulary.js';

/**
 * Garmin Health API in the sandbox. Garmin pushes data rather than answering pulls, so the data
 * API here is the one call a partner makes after consent, `GET /wellness-api/rest/user/id`
 * (`{"userId": …}`, the id every push names), and `garminNotification` / `pushTo` build and send
 * the notification bodies Garmin would POST to the partner's endpoints. Values are generated
 * deterministically from (Garmin user id, summary type, local day): the same window always gives
 * the same summaries. The sandbox person lives in Europe/Berlin (offsets +01:00 / +02:00, DST
 * included).
 */
const ZONE = 'Europe/Berlin';

/** The Garmin user id of a sandbox user: a stable UUID-shaped id, as Garmin's are. */
export function garminUserIdOf(sandboxUser: string): string {
  const h = createHash('sha256').update(`garmin-user:${sandboxUser}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A Garmin API with its own memory of the backfill spans asked for (one per sandbox). */
export function garminSandbox(): DataHandler {
  /** Spans already asked for, per user and type: Garmin answers a repeated request with 409. */
  const askedSpans = new Set<string>();
  return ({ method, path, query, token, pushUrl }) => {
    if (method === 'GET' && path === GARMIN_USER_ID_PATH) return { status: 200, body: { userId: garminUserIdOf(token.user) } };
    const type = BACKFILL_TYPE.get(path);
    if (method === 'GET' && type) return backfill(askedSpans, type, query, garminUserIdOf(token.user), pushUrl);
    return null;
  };
}

const BACKFILL_TYPE = new Map(Object.entries(BACKFILL_PATH).map(([type, path]) => [path, type as SummaryType]));

/**
 * Garmin's Backfill API: 202 at once, then the window's summaries are pushed to the registered
 * address (Sandbox.registerPush, or the control action `register_push`) as Garmin does later;
 * with no address registered nothing is pushed. At most 90 days per request (400), a span asked
 * for again is 409.
 */
function backfill(askedSpans: Set<string>, type: SummaryType, query: URLSearchParams, userId: string, pushUrl: string | null) {
  const from = Number(query.get('summaryStartTimeInSeconds'));
  const to = Number(query.get('summaryEndTimeInSeconds'));
  if (!Number.isInteger(from) || !Number.isInteger(to) || from >= to) return { status: 400, body: { errorMessage: 'summaryStartTimeInSeconds and summaryEndTimeInSeconds: epoch seconds, start before end' } };
  if (to - from > BACKFILL_MAX_SECONDS) return { status: 400, body: { errorMessage: 'a backfill request covers at most 90 days' } };
  const span = `${userId}:${type}:${from}:${to}:${pushUrl ?? ''}`;
  if (askedSpans.has(span)) return { status: 409, body: { errorMessage: 'duplicate backfill request' } };
  askedSpans.add(span);
  if (pushUrl) {
    const body = garminNotification(userId, type, { start: new Date(from * 1000), end: new Date(to * 1000) });
    // Pushed after the answer, as Garmin does: the partner's endpoint stores it as any push.
    setTimeout(() => void pushTo(pushUrl, body).catch(() => undefined), 10);
  }
  return { status: 202, body: null };
}

/** A deterministic stream of numbers in [0, 1) for one (user, type, day). */
function random(seed: string): () => number {
  let counter = 0;
  return () => {
    const h = createHash('sha256').update(`${seed}:${counter++}`).digest();
    return h.readUInt32BE(0) / 2 ** 32;
  };
}

/** Seconds to add to UTC for Berlin's local time at an instant. */
function offsetAt(epochSeconds: number): number {
  const name = new Intl.DateTimeFormat('en-US', { timeZone: ZONE, timeZoneName: 'longOffset' })
    .formatToParts(new Date(epochSeconds * 1000))
    .find((p) => p.type === 'timeZoneName')!.value; // "GMT+01:00"
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60) : 0;
}

/** The local calendar days from the window's first UTC date up to (not including) its end's UTC date, with their UTC start and offset. */
function localDays(window: { start: Date; end: Date }): { date: string; start: number; offset: number; length: number }[] {
  const days = [];
  const first = Date.parse(`${window.start.toISOString().slice(0, 10)}T00:00:00Z`);
  for (let d = first; d < window.end.getTime(); d += 86_400_000) {
    const date = new Date(d).toISOString().slice(0, 10);
    const start = d / 1000 - offsetAt(d / 1000 - 3 * 3600);
    const next = (d + 86_400_000) / 1000 - offsetAt((d + 86_400_000) / 1000 - 3 * 3600);
    days.push({ date, start, offset: offsetAt(start), length: next - start });
  }
  return days;
}

const round = (v: number, digits = 0) => Math.round(v * 10 ** digits) / 10 ** digits;

type Day = { date: string; start: number; offset: number; length: number };
type Generator = (userId: string, day: Day, rnd: () => number) => Record<string, unknown>[];

const dailies: Generator = (userId, day, rnd) => {
  const steps = Math.round(6000 + rnd() * 7000);
  const hr: Record<string, number> = {};
  for (let o = 0; o < day.length; o += 15 * 60) {
    const hour = ((o + day.offset) / 3600) % 24;
    const asleep = hour < 6.5 || hour >= 23;
    hr[String(o)] = Math.round((asleep ? 52 : 68) + rnd() * (asleep ? 8 : 30));
  }
  return [
    {
      userId,
      summaryId: `x${userId.slice(0, 7)}-${day.start.toString(16)}`,
      calendarDate: day.date,
      activityType: 'WALKING',
      startTimeInSeconds: day.start,
      startTimeOffsetInSeconds: day.offset,
      durationInSeconds: day.length,
      steps,
      distanceInMeters: round(steps * 0.76, 1),
      activeTimeInSeconds: Math.round(steps * 0.55),
      activeKilocalories: Math.round(steps * 0.045),
      bmrKilocalories: 1690,
      moderateIntensityDurationInSeconds: Math.round(rnd() * 2400),
      vigorousIntensityDurationInSeconds: Math.round(rnd() * 1200),
      floorsClimbed: Math.round(rnd() * 14),
      minHeartRateInBeatsPerMinute: Math.min(...Object.values(hr)),
      averageHeartRateInBeatsPerMinute: Math.round(Object.values(hr).reduce((a, b) => a + b, 0) / Object.values(hr).length),
      maxHeartRateInBeatsPerMinute: Math.max(...Object.values(hr)),
      restingHeartRateInBeatsPerMinute: Math.round(50 + rnd() * 8),
      timeOffsetHeartRateSamples: hr,
      averageStressLevel: Math.round(20 + rnd() * 20),
      stepsGoal: 10000,
      source: 'FORERUNNER_255',
    },
  ];
};

const epochs: Generator = (userId, day, rnd) => {
  const out = [];
  for (let o = 7 * 3600; o < 22 * 3600; o += 900) {
    const walking = rnd() < 0.35;
    const steps = walking ? Math.round(200 + rnd() * 1200) : Math.round(rnd() * 60);
    out.push({
      userId,
      summaryId: `x${userId.slice(0, 7)}-${(day.start + o).toString(16)}-${walking ? 'w' : 's'}`,
      activityType: walking ? 'WALKING' : 'SEDENTARY',
      activeKilocalories: round(steps * 0.045, 1),
      steps,
      distanceInMeters: round(steps * 0.76, 1),
      durationInSeconds: 900,
      activeTimeInSeconds: walking ? Math.round(steps * 0.55) : 0,
      startTimeInSeconds: day.start + o,
      startTimeOffsetInSeconds: day.offset,
      met: round(walking ? 3 + rnd() : 1.1, 2),
      intensity: walking ? 'ACTIVE' : 'SEDENTARY',
      meanMotionIntensity: round(rnd() * 4, 2),
      maxMotionIntensity: round(4 + rnd() * 3, 2),
    });
  }
  return out;
};

/** The night that ends on the morning of `day`: from about 23:00 the evening before. */
function night(day: Day, rnd: () => number) {
  const start = day.start - Math.round(3600 + rnd() * 1800);
  const cycles: { level: 'deep' | 'light' | 'rem' | 'awake'; from: number; to: number }[] = [];
  let t = start;
  for (let c = 0; c < 5; c++) {
    for (const [level, minutes] of [
      ['light', 25 + rnd() * 15],
      ['deep', c < 3 ? 25 - c * 6 + rnd() * 10 : 5],
      ['light', 15 + rnd() * 10],
      ['rem', 10 + c * 5 + rnd() * 8],
      ['awake', rnd() * 4 + 1],
    ] as const) {
      const to = t + Math.round(minutes * 60);
      cycles.push({ level, from: t, to });
      t = to;
    }
  }
  return { start, end: t, cycles };
}

const sleeps: Generator = (userId, day, rnd) => {
  const n = night(day, rnd);
  const total = (level: string) => n.cycles.filter((c) => c.level === level).reduce((a, c) => a + c.to - c.from, 0);
  const levels: Record<string, { startTimeInSeconds: number; endTimeInSeconds: number }[]> = { deep: [], light: [], rem: [], awake: [] };
  for (const c of n.cycles) levels[c.level]!.push({ startTimeInSeconds: c.from, endTimeInSeconds: c.to });
  const spo2: Record<string, number> = {};
  const resp: Record<string, number> = {};
  for (let o = 0; o < n.end - n.start; o += 60 * 30) {
    spo2[String(o)] = Math.round(93 + rnd() * 5);
    resp[String(o)] = round(13 + rnd() * 3, 1);
  }
  return [
    {
      userId,
      summaryId: `x${userId.slice(0, 7)}-${n.start.toString(16)}`,
      calendarDate: day.date,
      startTimeInSeconds: n.start,
      startTimeOffsetInSeconds: offsetAt(n.start),
      durationInSeconds: n.end - n.start,
      unmeasurableSleepInSeconds: 0,
      deepSleepDurationInSeconds: total('deep'),
      lightSleepDurationInSeconds: total('light'),
      remSleepInSeconds: total('rem'),
      awakeDurationInSeconds: total('awake'),
      sleepLevelsMap: levels,
      validation: 'ENHANCED_FINAL',
      timeOffsetSleepSpo2: spo2,
      timeOffsetSleepRespiration: resp,
      overallSleepScore: { value: Math.round(65 + rnd() * 25), qualifierKey: 'GOOD' },
    },
  ];
};

/** A run every other day at 18:00 local, with its GPS track along the Spree. */
function run(userId: string, day: Day, rnd: () => number) {
  if (Number(day.date.slice(8, 10)) % 2 === 1) return null;
  const start = day.start + 18 * 3600;
  const duration = Math.round(1800 + rnd() * 1200);
  const distance = round(duration * (2.6 + rnd() * 0.6), 1);
  const activityId = 9_000_000_000 + Math.floor(start / 60);
  const summary = {
    activityId,
    activityName: 'Berlin Running',
    durationInSeconds: duration,
    startTimeInSeconds: start,
    startTimeOffsetInSeconds: day.offset,
    activityType: 'RUNNING',
    averageHeartRateInBeatsPerMinute: Math.round(142 + rnd() * 14),
    maxHeartRateInBeatsPerMinute: Math.round(168 + rnd() * 12),
    averageSpeedInMetersPerSecond: round(distance / duration, 3),
    averageRunCadenceInStepsPerMinute: round(160 + rnd() * 12, 1),
    activeKilocalories: Math.round(distance * 0.065),
    deviceName: 'Forerunner 255',
    distanceInMeters: distance,
    steps: Math.round(duration * 2.7),
    totalElevationGainInMeters: round(10 + rnd() * 30, 1),
    startingLatitudeInDegree: 52.5145,
    startingLongitudeInDegree: 13.35,
  };
  return { userId, summaryId: String(activityId), summary, start, duration, rnd };
}

const activities: Generator = (userId, day, rnd) => {
  const r = run(userId, day, rnd);
  return r ? [{ userId, summaryId: r.summaryId, ...r.summary }] : [];
};

const activityDetails: Generator = (userId, day, rnd) => {
  const r = run(userId, day, rnd);
  if (!r) return [];
  const samples = [];
  for (let o = 0; o <= r.duration; o += 15) {
    samples.push({
      startTimeInSeconds: r.start + o,
      latitudeInDegree: round(52.5145 + Math.sin(o / 600) * 0.01, 6),
      longitudeInDegree: round(13.35 + o * 0.000025, 6),
      elevationInMeters: round(34 + Math.sin(o / 300) * 3, 1),
      heartRate: Math.round(130 + Math.min(o / 30, 25) + r.rnd() * 8),
      speedMetersPerSecond: round(2.6 + r.rnd() * 0.6, 2),
      totalDistanceInMeters: round(o * 2.9, 1),
      timerDurationInSeconds: o,
      clockDurationInSeconds: o,
      movingDurationInSeconds: o,
    });
  }
  return [{ userId, summaryId: `${r.summaryId}-detail`, activityId: r.summary.activityId, summary: r.summary, samples, laps: [{ startTimeInSeconds: r.start }] }];
};

const bodyComps: Generator = (userId, day, rnd) => {
  const t = day.start + 7 * 3600 + Math.round(rnd() * 1200);
  const kg = 74 + Math.sin(day.start / 86_400 / 9) * 0.8 + rnd() * 0.3;
  return [
    {
      userId,
      summaryId: `x${userId.slice(0, 7)}-${t.toString(16)}`,
      measurementTimeInSeconds: t,
      measurementTimeOffsetInSeconds: offsetAt(t),
      weightInGrams: Math.round(kg * 1000),
      bodyFatInPercent: round(17 + rnd() * 1.5, 1),
      bodyMassIndex: round(kg / 1.8 ** 2, 1),
      muscleMassInGrams: Math.round(kg * 430),
      boneMassInGrams: 3400,
      bodyWaterInPercent: round(58 + rnd() * 2, 1),
    },
  ];
};

const hrv: Generator = (userId, day, rnd) => {
  const n = night(day, random(`${userId}:sleeps:${day.date}`));
  const values: Record<string, number> = {};
  for (let o = 0; o < n.end - n.start; o += 300) values[String(o)] = Math.round(38 + rnd() * 30);
  const all = Object.values(values);
  return [
    {
      userId,
      summaryId: `x${userId.slice(0, 7)}-${n.start.toString(16)}`,
      calendarDate: day.date,
      lastNightAvg: Math.round(all.reduce((a, b) => a + b, 0) / all.length),
      lastNight5MinHigh: Math.max(...all),
      startTimeOffsetInSeconds: offsetAt(n.start),
      durationInSeconds: n.end - n.start,
      startTimeInSeconds: n.start,
      hrvValues: values,
    },
  ];
};

const stressDetails: Generator = (userId, day, rnd) => {
  const stress: Record<string, number> = {};
  const battery: Record<string, number> = {};
  for (let o = 0; o < day.length; o += 180) {
    stress[String(o)] = rnd() < 0.05 ? -1 : Math.round(rnd() * 60);
    battery[String(o)] = Math.max(5, Math.round(95 - (o / day.length) * 70));
  }
  return [
    {
      userId,
      summaryId: `x${userId.slice(0, 7)}-${day.start.toString(16)}`,
      startTimeInSeconds: day.start,
      startTimeOffsetInSeconds: day.offset,
      durationInSeconds: day.length,
      calendarDate: day.date,
      timeOffsetStressLevelValues: stress,
      timeOffsetBodyBatteryValues: battery,
    },
  ];
};

const pulseox: Generator = (userId, day, rnd) => {
  const n = night(day, random(`${userId}:sleeps:${day.date}`));
  const values: Record<string, number> = {};
  for (let o = 0; o < n.end - n.start; o += 3600) values[String(o)] = Math.round(93 + rnd() * 5);
  return [
    {
      userId,
      summaryId: `x${userId.slice(0, 7)}-${n.start.toString(16)}-spo2`,
      calendarDate: day.date,
      startTimeInSeconds: n.start,
      startTimeOffsetInSeconds: offsetAt(n.start),
      durationInSeconds: n.end - n.start,
      timeOffsetSpo2Values: values,
      onDemand: false,
    },
  ];
};

const respiration: Generator = (userId, day, rnd) => {
  const values: Record<string, number> = {};
  for (let o = 0; o < 6 * 3600; o += 900) values[String(o)] = round(12 + rnd() * 5, 2);
  return [{ userId, summaryId: `x${userId.slice(0, 7)}-${day.start.toString(16)}-resp`, startTimeInSeconds: day.start, durationInSeconds: 6 * 3600, startTimeOffsetInSeconds: day.offset, timeOffsetEpochToBreaths: values }];
};

const userMetrics: Generator = (userId, day, rnd) => [
  { userId, summaryId: `x${userId.slice(0, 7)}-${day.date}`, calendarDate: day.date, vo2Max: round(48 + rnd() * 2, 1), fitnessAge: 31, enhanced: true },
];

const GENERATORS: Record<SummaryType, Generator> = { dailies, epochs, sleeps, activities, activityDetails, bodyComps, hrv, stressDetails, pulseox, respiration, userMetrics };

/** The body Garmin would push for one user, summary type and window: `{"<type>": [summary, …]}`. */
export function garminNotification(userId: string, summaryType: SummaryType, window: { start: Date; end: Date }): Record<string, unknown[]> {
  const items = localDays(window).flatMap((day) => GENERATORS[summaryType](userId, day, random(`${userId}:${summaryType}:${day.date}`)));
  return { [summaryType]: items };
}

/** Garmin's registration notifications: the user removed the partner's access, or changed what it may read. */
export function garminDeregistration(userId: string): Record<string, unknown[]> {
  return { deregistrations: [{ userId }] };
}

export function garminPermissionsChange(userId: string, permissions: string[], at: Date): Record<string, unknown[]> {
  return { userPermissionsChange: [{ userId, summaryId: `x${userId.slice(0, 7)}-perm-${Math.floor(at.getTime() / 1000).toString(16)}`, permissions, changeTimeInSeconds: Math.floor(at.getTime() / 1000) }] };
}

/** Sends a notification as Garmin's push service does (POST, JSON); answers the partner's status. */
export async function pushTo(url: string, body: Record<string, unknown[]>): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

/**
 * `POST /_sandbox/control?action=push&url=…&type=dailies&start=…&end=…` on Garmin's port: the
 * sandbox pushes its person's notification of that summary type and window (default: the last
 * day) to `url`, as Garmin would to a registered endpoint; `type=deregistrations` deregisters.
 * Answers what the partner's endpoint answered.
 */
export async function garminControlPush(q: URLSearchParams, sandboxUser: string, now: Date): Promise<{ status: number; body: unknown }> {
  const type = q.get('type') ?? '';
  const url = q.get('url') ?? '';
  if (!/^https?:\/\//.test(url)) return { status: 400, body: { error: 'url: the absolute http(s) address to push to' } };
  const start = q.get('start') ? new Date(q.get('start')!) : new Date(now.getTime() - 86_400_000);
  const end = q.get('end') ? new Date(q.get('end')!) : now;
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime()) || start >= end) return { status: 400, body: { error: 'start and end: ISO instants, start before end' } };
  const userId = garminUserIdOf(sandboxUser);
  let body: Record<string, unknown[]>;
  if (type === 'deregistrations') body = garminDeregistration(userId);
  else if (Object.hasOwn(GENERATORS, type)) body = garminNotification(userId, type as SummaryType, { start, end });
  else return { status: 400, body: { error: `type: one of ${[...Object.keys(GENERATORS), 'deregistrations'].join(', ')}` } };
  try {
    return { status: 200, body: { pushed: type, user_id: userId, answered: await pushTo(url, body) } };
  } catch {
    return { status: 502, body: { error: 'the endpoint did not answer' } };
  }
}
