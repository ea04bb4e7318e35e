import type { DataHandler } from '../sandboxTypes.js';
import { sandboxNumericUser } from '../tokenAnswers.js';
import { between, localDay, localMs, offsetMinutes, seeded, shiftDate, stableId } from './sandboxSeries.js';

/**
 * Polar AccessLink v3 in the sandbox. The person lives in Helsinki and wears a Polar watch: an
 * exercise most evenings (heart rate samples every 5 s), daily activity with step samples, two
 * physical information entries, nights with hypnogram and heart rate, Nightly Recharge, and
 * continuous heart rate. Exercises, activity and physical information are offered through
 * transactions: an item is offered from its upload until a committed transaction held it
 * (uploads of the last OFFERED_DAYS days, as after a registration); nights and recharges cover
 * the last 28 days. Transaction state lives in each handler made by `polarSandbox()`.
 */
const ZONE = 'Europe/Helsinki';
const ORIGIN = 'https://www.polaraccesslink.com';
const OFFERED_DAYS = 14;
const DAY_MS = 86_400_000;

type Kind = 'exercise' | 'activity' | 'physical-information';
type Item = { id: number; uploaded: number; body: Record<string, unknown>; date: string };
type Transaction = { id: number; kind: Kind; user: number; upTo: number; items: Item[]; committed: boolean };
type UserState = { registered: number | null; memberId: string | null; committed: Record<Kind, number> };

const isoLocal = (ms: number) => new Date(ms + offsetMinutes(ms, ZONE) * 60_000).toISOString().slice(0, 19);
const offsetText = (ms: number) => {
  const m = offsetMinutes(ms, ZONE);
  return `${m < 0 ? '-' : '+'}${String(Math.floor(Math.abs(m) / 60)).padStart(2, '0')}:${String(Math.abs(m) % 60).padStart(2, '0')}`;
};
const withOffset = (ms: number) => `${isoLocal(ms)}${offsetText(ms)}`;
const clock = (ms: number, seconds = false) => isoLocal(ms).slice(11, seconds ? 19 : 16);
const duration = (s: number) => `PT${Math.floor(s / 3600) ? `${Math.floor(s / 3600)}H` : ''}${Math.floor((s % 3600) / 60) ? `${Math.floor((s % 3600) / 60)}M` : ''}${s % 60 || s === 0 ? `${s % 60}S` : ''}`;

function exercise(user: string, date: string) {
  const r = seeded(user, 'polar-exercise', date);
  if (r() > 0.6) return null;
  const sports = [
    { sport: 'RUNNING', detailed: 'ROAD_RUNNING', speed: 2.9, kcal: 11.5, hr: [138, 158] },
    { sport: 'CYCLING', detailed: 'ROAD_BIKING', speed: 7.2, kcal: 9.5, hr: [125, 148] },
    { sport: 'STRENGTH_TRAINING', detailed: 'STRENGTH_TRAINING', speed: 0, kcal: 6, hr: [105, 125] },
  ];
  const s = sports[Math.floor(r() * sports.length)]!;
  const start = localMs(date, 17 * 60 + 30 + between(r, 0, 90), ZONE);
  const seconds = between(r, 30, 75) * 60 + between(r, 0, 59);
  const avg = between(r, s.hr[0]!, s.hr[1]!);
  const id = stableId(user, 'polar-exercise', date) % 2_000_000_000;
  return {
    id,
    start,
    end: start + seconds * 1000,
    avg,
    seed: `${user}|${date}`,
    summary: {
      id,
      'upload-time': new Date(start + seconds * 1000 + 600_000).toISOString(),
      'polar-user': `${ORIGIN}/v3/users/${sandboxNumericUser(user)}`,
      device: 'Polar Vantage V2',
      'device-id': '1A2B3C4D',
      'start-time': isoLocal(start),
      'start-time-utc-offset': offsetMinutes(start, ZONE),
      duration: duration(seconds),
      calories: Math.round((seconds / 60) * s.kcal),
      ...(s.speed ? { distance: Math.round(seconds * s.speed * 10) / 10 } : {}),
      'heart-rate': { average: avg, maximum: avg + between(r, 14, 28) },
      'training-load': Math.round(seconds / 30) / 1,
      sport: s.sport,
      'has-route': s.speed > 0,
      'detailed-sport-info': s.detailed,
      'fat-percentage': between(r, 25, 60),
      'carbohydrate-percentage': between(r, 35, 70),
      'protein-percentage': between(r, 1, 5),
    },
  };
}

function heartRateSamples(e: NonNullable<ReturnType<typeof exercise>>): string {
  const r = seeded(e.seed, 'polar-hr-samples');
  const n = Math.floor((e.end - e.start) / 5000);
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    const warm = Math.min(1, i / 60);
    values.push(i > 0 && r() < 0.004 ? 0 : Math.round(90 + (e.avg - 90) * warm + (r() - 0.5) * 8));
  }
  return values.join(',');
}

function activity(user: string, date: string) {
  const r = seeded(user, 'polar-activity', date);
  const steps = between(r, 5000, 15000);
  const active = Math.round(steps * 0.05);
  return {
    id: stableId(user, 'polar-activity', date) % 2_000_000_000,
    date,
    uploaded: localMs(date, 24 * 60 + 30, ZONE),
    summary: {
      id: stableId(user, 'polar-activity', date) % 2_000_000_000,
      'polar-user': `${ORIGIN}/v3/users/${sandboxNumericUser(user)}`,
      date,
      created: new Date(localMs(date, 24 * 60 + 30, ZONE)).toISOString(),
      calories: 1750 + active,
      'active-calories': active,
      duration: duration(Math.round(steps / 110) * 60),
      'active-steps': steps,
    },
    steps,
  };
}

function stepSamples(user: string, date: string, total: number) {
  const r = seeded(user, 'polar-steps', date);
  const weights = Array.from({ length: 96 }, (_, i) => (i < 28 || i > 90 ? 0 : 0.2 + r() * (i >= 70 && i <= 78 ? 4 : 1)));
  const sum = weights.reduce((a, b) => a + b, 0);
  return {
    date,
    interval: 15,
    samples: weights.map((w, i) => ({ steps: Math.round((total * w) / sum), time: `${String(Math.floor(i / 4)).padStart(2, '0')}:${String((i % 4) * 15).padStart(2, '0')}:00.000` })),
  };
}

function physicalInformation(user: string, nowMs: number): Item[] {
  // Two entries the user made in Flow, ten and three days before now (whole days: stable within a day).
  const today = localDay(nowMs, ZONE);
  return [10, 3].map((daysAgo, i) => {
    const date = shiftDate(today, -daysAgo);
    const created = localMs(date, 12 * 60, ZONE);
    const id = stableId(user, 'polar-physical', date) % 2_000_000_000;
    return {
      id,
      uploaded: created,
      date,
      body: {
        id,
        'transaction-id': 0,
        created: new Date(created).toISOString(),
        'polar-user': `${ORIGIN}/v3/users/${sandboxNumericUser(user)}`,
        weight: [78.4, 78.1][i],
        height: 181,
        'maximum-heart-rate': 188,
        'resting-heart-rate': [52, 51][i],
        'aerobic-threshold': 142,
        'anaerobic-threshold': 168,
        'vo2-max': 49,
        'weight-source': 'SOURCE_USER',
      },
    };
  });
}

/** The night ending on the morning of `date`. */
function night(user: string, date: string) {
  const r = seeded(user, 'polar-night', date);
  const start = localMs(shiftDate(date, -1), 23 * 60 + between(r, 0, 80), ZONE);
  const end = localMs(date, 6 * 60 + 30 + between(r, 0, 70), ZONE);
  const hypnogram: Record<string, number> = {};
  const hr: Record<string, number> = {};
  const hrv: Record<string, number> = {};
  const breathing: Record<string, number> = {};
  const totals = { 0: 0, 1: 0, 2: 0, 3: 0, 4: 0 } as Record<number, number>;
  let t = start;
  const cycle = [2, 3, 4, 3, 1];
  let k = 0;
  while (t < end) {
    const stage = t === start ? 2 : r() < 0.08 ? 0 : cycle[k++ % cycle.length]!;
    const minutes = stage === 0 ? between(r, 2, 6) : between(r, 10, 35);
    hypnogram[clock(t)] = stage;
    const to = Math.min(end, t + minutes * 60_000);
    totals[stage]! += (to - t) / 1000;
    t = to;
  }
  for (let s = start + 120_000; s < end; s += 600_000) {
    hr[clock(s)] = between(r, 47, 60);
    hrv[clock(s)] = between(r, 28, 62);
    breathing[clock(s)] = between(r, 12.5, 15.5, 1);
  }
  return {
    end,
    night: {
      polar_user: `${ORIGIN}/v3/users/${sandboxNumericUser(user)}`,
      date,
      sleep_start_time: withOffset(start),
      sleep_end_time: withOffset(end),
      device_id: '1A2B3C4D',
      continuity: between(r, 2.5, 4.2, 1),
      continuity_class: between(r, 2, 5),
      light_sleep: Math.round(totals[2]! + totals[3]!),
      deep_sleep: Math.round(totals[4]!),
      rem_sleep: Math.round(totals[1]!),
      unrecognized_sleep_stage: 0,
      sleep_score: between(r, 65, 92),
      total_interruption_duration: Math.round(totals[0]!),
      sleep_charge: between(r, 2, 5),
      sleep_goal: 28_800,
      sleep_rating: between(r, 2, 5),
      short_interruption_duration: Math.round(totals[0]! * 0.7),
      long_interruption_duration: Math.round(totals[0]! * 0.3),
      sleep_cycles: between(r, 4, 6),
      group_duration_score: between(r, 60, 100),
      group_solidity_score: between(r, 50, 100),
      group_regeneration_score: between(r, 50, 100, 1),
      hypnogram,
      heart_rate_samples: hr,
    },
    recharge: {
      polar_user: `${ORIGIN}/v3/users/${sandboxNumericUser(user)}`,
      date,
      heart_rate_avg: between(r, 50, 58),
      beat_to_beat_avg: between(r, 1000, 1180),
      heart_rate_variability_avg: between(r, 35, 55),
      breathing_rate_avg: between(r, 13, 15, 1),
      nightly_recharge_status: between(r, 1, 6),
      ans_charge: between(r, -3, 5, 1),
      ans_charge_status: between(r, 1, 5),
      hrv_samples: hrv,
      breathing_samples: breathing,
    },
  };
}

function continuousHeartRate(user: string, date: string, nowMs: number) {
  const r = seeded(user, 'polar-continuous', date);
  const samples: { heart_rate: number; sample_time: string }[] = [];
  // Every 10 minutes (the real service samples every 5): half the records, the same shape.
  for (let m = 0; m < 24 * 60; m += 10) {
    const at = localMs(date, m, ZONE);
    if (at > nowMs) break;
    const asleep = m < 7 * 60 || m >= 23 * 60;
    samples.push({ heart_rate: asleep ? between(r, 48, 60) : between(r, 62, 96), sample_time: clock(at, true) });
  }
  return { polar_user: `${ORIGIN}/v3/users/${sandboxNumericUser(user)}`, date, heart_rate_samples: samples };
}

const LIST_KEY: Record<Kind, string> = { exercise: 'exercises', activity: 'activity-log', 'physical-information': 'physical-informations' };
const ITEM_PATH: Record<Kind, string> = { exercise: 'exercises', activity: 'activities', 'physical-information': 'physical-informations' };

/** A Polar data API with its own registrations and transactions (one per sandbox). */
export function polarSandbox(): DataHandler {
  const users = new Map<number, UserState>();
  const transactions = new Map<number, Transaction>();
  let nextTransaction = 1000;

  const offered = (user: string, kind: Kind, nowMs: number, since: number): Item[] => {
    const from = Math.max(since, nowMs - OFFERED_DAYS * DAY_MS);
    const today = localDay(nowMs, ZONE);
    const dates = Array.from({ length: OFFERED_DAYS + 2 }, (_, i) => shiftDate(today, -OFFERED_DAYS - 1 + i));
    let items: Item[];
    if (kind === 'exercise') {
      items = dates.flatMap((d) => {
        const e = exercise(user, d);
        return e ? [{ id: e.id, uploaded: Date.parse(e.summary['upload-time']), body: e.summary, date: d }] : [];
      });
    } else if (kind === 'activity') {
      items = dates.map((d) => {
        const a = activity(user, d);
        return { id: a.id, uploaded: a.uploaded, body: a.summary, date: d };
      });
    } else items = physicalInformation(user, nowMs);
    return items.filter((i) => i.uploaded > from && i.uploaded <= nowMs);
  };

  return ({ method, path, json, token, now }) => {
    if (!path.startsWith('/v3/users')) return null;
    const user = token.user;
    const userId = sandboxNumericUser(user);
    const nowMs = now.getTime();
    const state = users.get(userId);
    const seg = path.split('/').filter(Boolean); // v3, users, …

    if (path === '/v3/users' && method === 'POST') {
      const memberId = json && typeof json === 'object' ? (json as Record<string, unknown>)['member-id'] : undefined;
      if (typeof memberId !== 'string' || !memberId) return { status: 400, body: { error: 'member-id is required' } };
      if (state?.registered) return { status: 409, body: { error: 'User already registered to partner' } };
      users.set(userId, { registered: nowMs, memberId, committed: { exercise: 0, activity: 0, 'physical-information': 0 } });
      return { status: 200, body: userInfo(userId, memberId, nowMs) };
    }
    if (seg[2] === 'sleep' && seg.length === 3 && method === 'GET') {
      const today = localDay(nowMs, ZONE);
      const nights = Array.from({ length: 28 }, (_, i) => night(user, shiftDate(today, -27 + i))).filter((n) => n.end <= nowMs);
      return { status: 200, body: { nights: nights.map((n) => n.night) } };
    }
    if (seg[2] === 'nightly-recharge' && seg.length === 3 && method === 'GET') {
      const today = localDay(nowMs, ZONE);
      const nights = Array.from({ length: 28 }, (_, i) => night(user, shiftDate(today, -27 + i))).filter((n) => n.end <= nowMs);
      return { status: 200, body: { recharges: nights.map((n) => n.recharge) } };
    }
    if (seg[2] === 'continuous-heart-rate' && seg.length === 4 && method === 'GET') {
      const date = seg[3]!;
      const today = localDay(nowMs, ZONE);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return { status: 400, body: { error: 'date must be YYYY-MM-DD' } };
      if (date > today || date < shiftDate(today, -28)) return { status: 404, body: { error: 'no data' } };
      return { status: 200, body: continuousHeartRate(user, date, nowMs) };
    }

    // Everything below is /v3/users/{user-id}/…, for the registered user only.
    if (seg.length < 3 || !/^\d+$/.test(seg[2]!)) return null;
    if (Number(seg[2]) !== userId) return { status: 403, body: { error: 'the token belongs to another user' } };
    if (seg.length === 3 && method === 'GET') return state?.registered ? { status: 200, body: userInfo(userId, state.memberId!, state.registered) } : { status: 404, body: { error: 'user not registered' } };
    if (seg.length === 3 && method === 'DELETE') {
      users.delete(userId);
      return { status: 204, body: null };
    }
    if (!state?.registered) return { status: 404, body: { error: 'user not registered' } };
    const kind = (seg[3] ?? '').replace(/-transactions$/, '') as Kind;
    if (!(kind in LIST_KEY)) return null;
    if (seg.length === 4 && method === 'POST') {
      const items = offered(user, kind, nowMs, state.committed[kind]);
      if (!items.length) return { status: 204, body: null };
      const id = nextTransaction++;
      transactions.set(id, { id, kind, user: userId, upTo: nowMs, items, committed: false });
      return { status: 201, body: { 'transaction-id': id, 'resource-uri': `${ORIGIN}/v3/users/${userId}/${kind}-transactions/${id}` } };
    }
    const tx = transactions.get(Number(seg[4]));
    if (!tx || tx.kind !== kind || tx.user !== userId || tx.committed) return { status: 404, body: { error: 'transaction not found' } };
    const base = `${ORIGIN}/v3/users/${userId}/${kind}-transactions/${tx.id}`;
    if (seg.length === 5 && method === 'PUT') {
      tx.committed = true;
      state.committed[kind] = Math.max(state.committed[kind], tx.upTo);
      return { status: 200, body: null };
    }
    if (seg.length === 5 && method === 'GET') return { status: 200, body: { [LIST_KEY[kind]]: tx.items.map((i) => `${base}/${ITEM_PATH[kind]}/${i.id}`) } };
    if (seg[5] !== ITEM_PATH[kind] || method !== 'GET') return null;
    const item = tx.items.find((i) => String(i.id) === seg[6]);
    if (!item) return { status: 404, body: { error: 'not found' } };
    const itemUrl = `${base}/${ITEM_PATH[kind]}/${item.id}`;
    if (seg.length === 7) return { status: 200, body: { ...item.body, 'transaction-id': tx.id } };
    if (kind === 'exercise' && seg[7] === 'samples') {
      if (seg.length === 8) return { status: 200, body: { samples: [`${itemUrl}/samples/0`, `${itemUrl}/samples/3`] } };
      const e = exercise(user, item.date)!;
      if (seg[8] === '0') return { status: 200, body: { 'recording-rate': 5, 'sample-type': '0', data: heartRateSamples(e) } };
      if (seg[8] === '3') return { status: 200, body: { 'recording-rate': 5, 'sample-type': '3', data: Array.from({ length: Math.floor((e.end - e.start) / 5000) }, (_, i) => (12 + Math.sin(i / 40) * 6).toFixed(1)).join(',') } };
      return { status: 404, body: { error: 'no samples of that type' } };
    }
    if (kind === 'activity' && seg[7] === 'step-samples' && seg.length === 8) {
      const a = activity(user, item.date);
      return { status: 200, body: stepSamples(user, item.date, a.steps) };
    }
    return null;
  };
}

function userInfo(userId: number, memberId: string, registered: number) {
  return {
    'polar-user-id': userId,
    'member-id': memberId,
    'registration-date': new Date(registered).toISOString().slice(0, 19),
    'first-name': 'Sandbox',
    'last-name': 'Runner',
    birthdate: '1988-04-12',
    gender: 'MALE',
    weight: 78.1,
    height: 181,
    'extra-info': [],
  };
}

