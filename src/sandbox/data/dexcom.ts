import { DateTime } from 'luxon';
import type { DataHandler } from '../sandboxTypes.js';
import { between, seeded } from './sandboxSeries.js';
import { stableUuid } from './stableUuid.js';

/**
 * Dexcom API v3 in the sandbox: one G7 wearer in Berlin (summer and winter time) whose sensor
 * started `HISTORY_DAYS` ago, read through the phone app. `dataRange` names the first and last
 * records; `egvs` answers a reading every five minutes between `startDate` and `endDate` (UTC
 * without an offset, end excluded, at most 30 days, as Dexcom refuses longer spans); events hold a
 * lunch's carbs and an insulin dose each day; no calibrations (a G7 needs none); one device.
 * Readings stop an hour before now: Dexcom serves them with a delay.
 */
export const DEXCOM_SANDBOX_ZONE = 'Europe/Berlin';
export const DEXCOM_HISTORY_DAYS = 20;
const FIVE_MIN = 300_000;
const DELAY_MS = 3_600_000;
const MAX_SPAN_MS = 30 * 86_400_000;
const QUERY_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

type Answer = { status: number; body: unknown };
const bad = (message: string): Answer => ({ status: 400, body: { error: 'invalid_request', error_description: message } });

/** System times as the phone apps send them (UTC with an offset), display times as the phone's wall clock with its offset. */
const systemTime = (ms: number) => new Date(ms).toISOString().slice(0, 19) + '+00:00';
const displayTime = (ms: number) => DateTime.fromMillis(ms, { zone: DEXCOM_SANDBOX_ZONE }).toISO({ suppressMilliseconds: true, includeOffset: true })!;

/** The sandbox wearer's first and last reading: the sensor started on a five-minute mark HISTORY_DAYS back; the last is an hour old. */
export function dexcomSpan(nowMs: number): { first: number; last: number } {
  const last = Math.floor((nowMs - DELAY_MS) / FIVE_MIN) * FIVE_MIN;
  return { first: last - DEXCOM_HISTORY_DAYS * 86_400_000, last };
}

/** The reading at a five-minute mark, in mg/dL: a daily curve with meals, plus noise seeded by the time. */
export function dexcomGlucoseAt(user: string, ms: number): number {
  const hour = DateTime.fromMillis(ms, { zone: DEXCOM_SANDBOX_ZONE }).hour + DateTime.fromMillis(ms, { zone: DEXCOM_SANDBOX_ZONE }).minute / 60;
  const meal = (at: number) => 45 * Math.exp(-((hour - at) ** 2) / 1.5);
  return Math.round(95 + meal(8) + meal(13) + meal(19.5) + between(seeded(user, ms, 'egv'), -8, 8));
}

function egv(user: string, ms: number) {
  const value = dexcomGlucoseAt(user, ms);
  const before = dexcomGlucoseAt(user, ms - FIVE_MIN);
  const rate = Math.round(((value - before) / 5) * 10) / 10;
  return {
    recordId: stableUuid(user, 'egv', ms),
    systemTime: systemTime(ms),
    displayTime: displayTime(ms),
    transmitterId: stableUuid(user, 'transmitter').slice(0, 8),
    transmitterTicks: Math.floor((ms % 864_000_000) / 1000),
    value,
    trend: rate > 2 ? 'singleUp' : rate > 1 ? 'fortyFiveUp' : rate < -2 ? 'singleDown' : rate < -1 ? 'fortyFiveDown' : 'flat',
    trendRate: rate,
    unit: 'mg/dL',
    rateUnit: 'mg/dL/min',
    displayDevice: 'iOS',
    transmitterGeneration: 'g7',
    displayApp: 'G7',
    status: null,
  };
}

/** Each local day's lunch carbs (45 g at 12:30) and its insulin dose (4 units at 12:25). */
function eventsOn(user: string, date: string) {
  const at = (h: number, m: number) => DateTime.fromISO(`${date}T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:00`, { zone: DEXCOM_SANDBOX_ZONE }).toMillis();
  const carbs = at(12, 30);
  const insulin = at(12, 25);
  return [
    { ms: insulin, doc: { recordId: stableUuid(user, 'insulin', date), systemTime: systemTime(insulin), displayTime: displayTime(insulin), eventStatus: 'created', eventType: 'insulin', eventSubType: 'fastActing', value: 4, unit: 'units', transmitterId: null, transmitterGeneration: 'g7', displayDevice: 'iOS' } },
    { ms: carbs, doc: { recordId: stableUuid(user, 'carbs', date), systemTime: systemTime(carbs), displayTime: displayTime(carbs), eventStatus: 'created', eventType: 'carbs', eventSubType: null, value: 45, unit: 'grams', transmitterId: null, transmitterGeneration: 'g7', displayDevice: 'iOS' } },
  ];
}

const envelope = (recordType: string, userId: string, records: unknown[]) => ({ recordType, recordVersion: '3.0', userId, records });

export const dexcomData: DataHandler = ({ method, path, query, token, now }) => {
  if (method !== 'GET' || !path.startsWith('/v3/users/self/')) return null;
  const user = token.user;
  const userId = stableUuid(user, 'dexcom-user');
  const { first, last } = dexcomSpan(now.getTime());
  const kind = path.slice('/v3/users/self/'.length);
  if (kind === 'dataRange') {
    const moment = (ms: number) => ({ systemTime: systemTime(ms), displayTime: displayTime(ms) });
    const firstEvent = eventsOn(user, DateTime.fromMillis(first, { zone: DEXCOM_SANDBOX_ZONE }).plus({ days: 1 }).toISODate()!)[0]!.ms;
    const lastEvent = eventsOn(user, DateTime.fromMillis(last, { zone: DEXCOM_SANDBOX_ZONE }).minus({ days: 1 }).toISODate()!)[1]!.ms;
    return { status: 200, body: { recordType: 'dataRange', recordVersion: '3.0', userId, egvs: { start: moment(first), end: moment(last) }, events: { start: moment(firstEvent), end: moment(lastEvent) } } };
  }
  if (kind === 'devices') {
    return {
      status: 200,
      body: envelope('device', userId, [{ lastUploadDate: systemTime(last), transmitterId: stableUuid(user, 'transmitter').slice(0, 8), transmitterGeneration: 'g7', displayDevice: 'iOS', displayApp: 'G7', alertSchedules: [] }]),
    };
  }
  if (kind !== 'egvs' && kind !== 'calibrations' && kind !== 'events') return null;
  const startDate = query.get('startDate');
  const endDate = query.get('endDate');
  if (!startDate || !endDate || !QUERY_TIME.test(startDate) || !QUERY_TIME.test(endDate)) return bad('startDate and endDate are required, as YYYY-MM-DDThh:mm:ss');
  const from = Date.parse(`${startDate}Z`);
  const to = Date.parse(`${endDate}Z`);
  if (!(from < to)) return bad('startDate must be before endDate');
  if (to - from > MAX_SPAN_MS) return bad('the time window is longer than 30 days');
  if (kind === 'calibrations') return { status: 200, body: envelope('calibration', userId, []) };
  if (kind === 'egvs') {
    const records = [];
    for (let t = Math.max(first, Math.ceil(from / FIVE_MIN) * FIVE_MIN); t < to && t <= last; t += FIVE_MIN) records.push(egv(user, t));
    return { status: 200, body: envelope('egv', userId, records) };
  }
  const days: string[] = [];
  for (let d = DateTime.fromMillis(from, { zone: DEXCOM_SANDBOX_ZONE }).startOf('day'); d.toMillis() < to; d = d.plus({ days: 1 })) days.push(d.toISODate()!);
  const events = days.flatMap((d) => eventsOn(user, d)).filter((e) => e.ms >= from && e.ms < to && e.ms > first && e.ms <= last);
  return { status: 200, body: envelope('event', userId, events.map((e) => e.doc)) };
};
