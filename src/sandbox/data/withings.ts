import type { DataHandler } from '../sandboxTypes.js';
import { between, datesBetween, localDay, localMs, seeded, shiftDate, stableId } from './sandboxSeries.js';

/**
 * Withings' data API in the sandbox: `getmeas` on /measure, `getactivity` and `getworkouts` on
 * /v2/measure, `getsummary` and `get` on /v2/sleep, as POST forms (or GET queries) answered
 * HTTP 200 `{status, body}` with Withings' own error statuses. The person lives in Paris: a
 * weigh-in every morning on a body-composition scale, blood pressure every other evening, SpO2
 * and temperature now and then, a tracker counting steps, nights on the Sleep Analyzer, and a
 * workout most days. Pages hold at most PAGE entries (`more`, `offset`).
 */
const ZONE = 'Europe/Paris';
const PAGE = 20;
const DAY_S = 86_400;

type Answer = { status: number; body: unknown };
const ok = (body: unknown): Answer => ({ status: 200, body: { status: 0, body } });
const err = (status: number, error: string): Answer => ({ status: 200, body: { status, error } });

type Measure = { value: number; type: number; unit: number; algo?: number; fm?: number };
type Group = { grpid: number; attrib: number; date: number; created: number; modified: number; category: number; deviceid: string | null; hash_deviceid: string | null; measures: Measure[]; modelid: number; model: string; comment: null; timezone: string };

const sec = (ms: number) => Math.floor(ms / 1000);

function measureGroups(user: string, date: string): Group[] {
  const r = seeded(user, 'withings-meas', date);
  const n = Date.parse(`${date}T00:00:00Z`) / 86_400_000;
  const groups: Group[] = [];
  const group = (kind: string, minutes: number, model: string, modelid: number, measures: Measure[]): Group => {
    const t = sec(localMs(date, minutes, ZONE));
    return { grpid: stableId(user, kind, date) % 2_000_000_000, attrib: 0, date: t, created: t + 40, modified: t + 40, category: 1, deviceid: `dev-${modelid}`, hash_deviceid: `dev-${modelid}`, measures, modelid, model, comment: null, timezone: ZONE };
  };
  const weight = 72 + 1.2 * Math.sin(n / 9) + between(r, -0.3, 0.3, 2);
  const fat = between(r, 17.5, 19.5, 2);
  groups.push(
    group('weight', 7 * 60 + between(r, 0, 25), 'Body Comp', 13, [
      { value: Math.round(weight * 1000), type: 1, unit: -3, algo: 3, fm: 131 },
      { value: Math.round(fat * 100), type: 6, unit: -2 },
      { value: Math.round(weight * (1 - fat / 100) * 1000), type: 5, unit: -3 },
    ]),
  );
  if (n % 2 === 0) {
    groups.push(
      group('bp', 20 * 60 + 30 + between(r, 0, 20), 'BPM Connect', 45, [
        { value: between(r, 112, 129), type: 10, unit: 0 },
        { value: between(r, 70, 83), type: 9, unit: 0 },
        { value: between(r, 58, 73), type: 11, unit: 0 },
      ]),
    );
  }
  if (n % 3 === 0) groups.push(group('spo2', 21 * 60 + between(r, 0, 30), 'ScanWatch', 93, [{ value: between(r, 95, 99), type: 54, unit: 0 }]));
  if (n % 5 === 0) groups.push(group('temp', 8 * 60 + between(r, 0, 30), 'Thermo', 70, [{ value: Math.round(between(r, 36.4, 37.1, 2) * 100), type: 71, unit: -2 }]));
  return groups;
}

function activityDay(user: string, date: string, nowMs: number) {
  const r = seeded(user, 'withings-activity', date);
  const dayStart = localMs(date, 0, ZONE);
  const dayEnd = localMs(date, 24 * 60, ZONE);
  // The day still running counts what was walked so far.
  const part = Math.min(1, Math.max(0, (nowMs - dayStart) / (dayEnd - dayStart)));
  const steps = Math.round(between(r, 4000, 14000) * part);
  const soft = Math.round(between(r, 1800, 5400) * part);
  const moderate = Math.round(between(r, 600, 2400) * part);
  const intense = Math.round(between(r, 0, 1500) * part);
  const calories = Math.round(steps * 0.045 * 10) / 10;
  return {
    date,
    timezone: ZONE,
    deviceid: null,
    hash_deviceid: null,
    brand: 18,
    is_tracker: true,
    steps,
    distance: Math.round(steps * 0.74 * 10) / 10,
    elevation: between(r, 0, 40),
    soft,
    moderate,
    intense,
    active: moderate + intense,
    calories,
    totalcalories: Math.round((calories + 1650 * part) * 10) / 10,
    hr_average: steps ? between(r, 68, 82) : 0,
    hr_min: steps ? between(r, 48, 56) : 0,
    hr_max: steps ? between(r, 120, 165) : 0,
    hr_zone_0: Math.round(50000 * part),
    hr_zone_1: Math.round(9000 * part),
    hr_zone_2: Math.round(2000 * part),
    hr_zone_3: Math.round(300 * part),
  };
}

type Segment = { startdate: number; enddate: number; state: number };

/** The night ending on the morning of `date`: in bed near 23:15 the evening before, up near 07:00. */
function night(user: string, date: string) {
  const r = seeded(user, 'withings-night', date);
  const start = sec(localMs(shiftDate(date, -1), 22 * 60 + 50 + between(r, 0, 60), ZONE));
  const end = sec(localMs(date, 6 * 60 + 40 + between(r, 0, 50), ZONE));
  const segments: Segment[] = [];
  let t = start;
  let fellAsleep = false;
  const push = (state: number, minutes: number) => {
    const to = Math.min(end, t + minutes * 60);
    if (to > t) segments.push({ startdate: t, enddate: to, state });
    t = to;
  };
  while (t < end) {
    if (!fellAsleep) push(0, between(r, 8, 22));
    fellAsleep = true;
    push(1, between(r, 20, 40));
    push(2, between(r, 15, 45));
    push(1, between(r, 10, 25));
    push(3, between(r, 10, 30));
    if (r() < 0.3) push(0, between(r, 2, 8));
  }
  const total = (s: number) => segments.filter((x) => x.state === s).reduce((a, x) => a + x.enddate - x.startdate, 0);
  const light = total(1);
  const deep = total(2);
  const rem = total(3);
  const awake = total(0);
  const summary = {
    id: stableId(user, 'withings-sleep', date) % 4_000_000_000,
    timezone: ZONE,
    model: 32,
    model_id: 63,
    hash_deviceid: 'dev-63',
    startdate: start,
    enddate: end,
    date,
    created: end + 600,
    modified: end + 600,
    data: {
      total_sleep_time: light + deep + rem,
      total_timeinbed: end - start,
      lightsleepduration: light,
      deepsleepduration: deep,
      remsleepduration: rem,
      wakeupduration: awake,
      wakeupcount: segments.filter((s, i) => s.state === 0 && i > 0).length,
      durationtosleep: segments[0]!.enddate - segments[0]!.startdate,
      durationtowakeup: 0,
      sleep_efficiency: Math.round(((light + deep + rem) / (end - start)) * 100) / 100,
      sleep_score: between(r, 62, 92),
      hr_average: between(r, 55, 62),
      hr_min: between(r, 46, 53),
      hr_max: between(r, 70, 88),
      rr_average: between(r, 13, 16),
      rr_min: between(r, 10, 12),
      rr_max: between(r, 17, 21),
      snoring: between(r, 0, 900),
      breathing_disturbances_intensity: between(r, 0, 20),
    },
  };
  return { summary, segments };
}

function workout(user: string, date: string) {
  const r = seeded(user, 'withings-workout', date);
  if (r() > 0.55) return null;
  const kinds = [
    { category: 2, minutes: [28, 55], speed: 2.8, kcalPerMin: 11 },
    { category: 1, minutes: [30, 70], speed: 1.4, kcalPerMin: 4.5 },
    { category: 6, minutes: [40, 95], speed: 6.5, kcalPerMin: 9 },
  ];
  const k = kinds[Math.floor(r() * kinds.length)]!;
  const minutes = between(r, k.minutes[0]!, k.minutes[1]!);
  const start = sec(localMs(date, 18 * 60 + between(r, 0, 60), ZONE));
  const pause = r() < 0.3 ? between(r, 30, 240) : 0;
  const effduration = minutes * 60;
  return {
    id: stableId(user, 'withings-workout', date) % 4_000_000_000,
    category: k.category,
    timezone: ZONE,
    model: 93,
    attrib: 7,
    startdate: start,
    enddate: start + effduration + pause,
    date,
    modified: start + effduration + pause + 300,
    deviceid: 'dev-93',
    hash_deviceid: 'dev-93',
    data: {
      calories: Math.round(minutes * k.kcalPerMin),
      intensity: 50,
      manual_distance: 0,
      manual_calories: 0,
      hr_average: between(r, 118, 152),
      hr_min: between(r, 70, 95),
      hr_max: between(r, 160, 182),
      hr_zone_0: 120,
      hr_zone_1: Math.round(effduration * 0.3),
      hr_zone_2: Math.round(effduration * 0.5),
      hr_zone_3: Math.round(effduration * 0.2),
      pause_duration: pause,
      algo_pause_duration: 0,
      spo2_average: null,
      steps: k.category === 6 ? 0 : Math.round(minutes * (k.category === 2 ? 165 : 110)),
      distance: Math.round(effduration * k.speed),
      elevation: between(r, 5, 90),
      effduration,
    },
  };
}

/** Heart and breathing rates of a segment, one value every 10 minutes, keyed by epoch seconds as `get` sends them. */
function segmentSeries(user: string, s: Segment, fields: ReadonlySet<string>): Record<string, Record<string, number>> {
  const r = seeded(user, 'withings-series', s.startdate);
  const hr: Record<string, number> = {};
  const rr: Record<string, number> = {};
  for (let t = s.startdate; t < s.enddate; t += 600) {
    hr[String(t)] = between(r, s.state === 0 ? 58 : 47, s.state === 0 ? 68 : 60);
    rr[String(t)] = between(r, 12, 17);
  }
  return { ...(fields.has('hr') ? { hr } : {}), ...(fields.has('rr') ? { rr } : {}) };
}

function page<T>(items: T[], offset: number, key: string, extra: Record<string, unknown> = {}): Answer {
  const slice = items.slice(offset, offset + PAGE);
  const more = offset + PAGE < items.length;
  return ok({ ...extra, [key]: slice, more, offset: more ? offset + PAGE : 0 });
}

const intParam = (v: string | null) => (v !== null && /^\d+$/.test(v) ? Number(v) : null);
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

export const withingsData: DataHandler = ({ method, path, query, form, token, now }) => {
  if (path !== '/measure' && path !== '/v2/measure' && path !== '/v2/sleep') return null;
  const p = method === 'GET' ? query : form;
  const action = p.get('action');
  const user = token.user;
  const nowMs = now.getTime();
  const offset = intParam(p.get('offset')) ?? 0;
  const today = localDay(nowMs, ZONE);
  const dateRange = (): string[] | null => {
    const a = p.get('startdateymd');
    const b = p.get('enddateymd');
    if (!a || !b || !DATE_RE.test(a) || !DATE_RE.test(b) || a > b) return null;
    return datesBetween(a, b < today ? b : today);
  };

  if (path === '/measure' && action === 'getmeas') {
    const from = intParam(p.get('startdate'));
    const to = intParam(p.get('enddate'));
    if (from === null || to === null || from > to) return err(503, 'Invalid Params: startdate and enddate');
    const types = p.get('meastypes')?.split(',').map(Number) ?? null;
    const category = intParam(p.get('category'));
    const upTo = Math.min(to, sec(nowMs));
    const groups = datesBetween(localDay(from * 1000, ZONE), localDay(upTo * 1000, ZONE))
      .flatMap((d) => measureGroups(user, d))
      .filter((g) => g.date >= from && g.date <= upTo && (category === null || g.category === category))
      .map((g) => ({ ...g, measures: types ? g.measures.filter((m) => types.includes(m.type)) : g.measures }))
      .filter((g) => g.measures.length > 0)
      .sort((a, b) => b.date - a.date);
    return page(groups, offset, 'measuregrps', { updatetime: sec(nowMs), timezone: ZONE });
  }
  if (path === '/v2/measure' && action === 'getactivity') {
    const dates = dateRange();
    if (!dates) return err(503, 'Invalid Params: startdateymd and enddateymd');
    return page(dates.map((d) => activityDay(user, d, nowMs)), offset, 'activities');
  }
  if (path === '/v2/measure' && action === 'getworkouts') {
    const dates = dateRange();
    if (!dates) return err(503, 'Invalid Params: startdateymd and enddateymd');
    const series = dates.map((d) => workout(user, d)).filter((w) => w !== null && w.enddate * 1000 <= nowMs);
    return page(series, offset, 'series');
  }
  if (path === '/v2/sleep' && action === 'getsummary') {
    const dates = dateRange();
    if (!dates) return err(503, 'Invalid Params: startdateymd and enddateymd');
    const series = dates.map((d) => night(user, d).summary).filter((s) => s.enddate * 1000 <= nowMs);
    return page(series, offset, 'series');
  }
  if (path === '/v2/sleep' && action === 'get') {
    const from = intParam(p.get('startdate'));
    const to = intParam(p.get('enddate'));
    if (from === null || to === null || from >= to) return err(503, 'Invalid Params: startdate and enddate');
    if (to - from > DAY_S) return err(503, 'Invalid Params: the range of get is at most 24 hours');
    const nights = [localDay(from * 1000, ZONE), shiftDate(localDay(from * 1000, ZONE), 1)].map((d) => night(user, d)).filter((n) => n.summary.enddate * 1000 <= nowMs);
    const fields = new Set((p.get('data_fields') ?? '').split(','));
    const series = nights.flatMap((n) =>
      n.segments.filter((s) => s.enddate > from && s.startdate < to).map((s) => ({ ...s, model: 32, model_id: 63, ...segmentSeries(user, s, fields) })),
    );
    return ok({ series, model: 32, model_id: 63 });
  }
  return err(2554, `Unknown action ${action ?? '(none)'} for ${path}`);
};
