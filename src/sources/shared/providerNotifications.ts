import { createHash } from 'node:crypto';
import { oura } from '../providers/oura/provider.js';
import { COLLECTIONS } from '../providers/fitbit/dataTypes.js';

/**
 * What a provider's change notification asks for: a `notification` run of one data type (null:
 * all) over a window, named by `notificationId` so a redelivery queues nothing more; the user
 * withdrawing the app (`deauthorized`); or something the connectors do not pull (`ignored`).
 */
export type NotificationItem =
  | { kind: 'changed'; providerUserId: string; dataType: string | null; window: { start: Date; end: Date }; notificationId: string }
  | { kind: 'deauthorized'; providerUserId: string; notificationId: string }
  | { kind: 'ignored'; providerUserId: string };

/** A delivery that is not the provider's documented shape (400). */
export class MalformedNotification extends Error {
  override name = 'MalformedNotification';
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex');
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const userIdOf = (v: unknown, what: string): string => {
  const id = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v;
  if (typeof id !== 'string' || !/^[A-Za-z0-9._:-]{1,128}$/.test(id)) throw new MalformedNotification(`${what} must name the provider's user`);
  return id;
};

/**
 * Windows never end after `now` (a run's window end is where the connection's data ends) and
 * always span at least an hour. `back`: how far before the change the data it names may start.
 */
function windowAround(at: Date, now: Date, back: number): { start: Date; end: Date } {
  const end = Math.min(at.getTime() + HOUR, now.getTime());
  return { start: new Date(Math.min(at.getTime() - back, end - HOUR)), end: new Date(end) };
}

/** A provider's local day (Fitbit, Withings `date`) padded by 14 hours each side: every zone's day falls inside. */
function localDayWindow(day: string, now: Date): { start: Date; end: Date } {
  const start = Date.parse(`${day}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || !Number.isFinite(start)) throw new MalformedNotification('date must be YYYY-MM-DD');
  const end = Math.min(start + DAY + 14 * HOUR, now.getTime());
  return { start: new Date(Math.min(start - 14 * HOUR, end - HOUR)), end: new Date(end) };
}

function json(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new MalformedNotification('the body is not JSON');
  }
}

/** Oura: `{event_type, data_type, object_id, event_time, user_id}`; the change may concern the two days before it (a night, a day's totals). */
export function ouraNotification(body: Buffer, now: Date): NotificationItem[] {
  const n = json(body);
  if (!isObject(n) || typeof n.event_type !== 'string' || typeof n.data_type !== 'string' || typeof n.event_time !== 'string') {
    throw new MalformedNotification('an Oura notification has event_type, data_type, event_time and user_id');
  }
  const at = new Date(n.event_time);
  if (Number.isNaN(at.getTime())) throw new MalformedNotification('event_time must be a date-time');
  const providerUserId = userIdOf(n.user_id, 'user_id');
  if (!oura.dataTypes.includes(n.data_type)) return [{ kind: 'ignored', providerUserId }];
  return [{ kind: 'changed', providerUserId, dataType: n.data_type, window: windowAround(at, now, 2 * DAY), notificationId: `oura:${digest(body.toString('utf8'))}` }];
}

const WHOOP_TYPE = /^(workout|sleep|recovery)\.(updated|deleted)$/;

/** WHOOP: `{user_id, id, type, trace_id}`; no time in it, so the two days before its arrival. */
export function whoopNotification(body: Buffer, now: Date): NotificationItem[] {
  const n = json(body);
  if (!isObject(n) || typeof n.type !== 'string' || (typeof n.id !== 'string' && typeof n.id !== 'number')) {
    throw new MalformedNotification('a WHOOP notification has user_id, id, type and trace_id');
  }
  const providerUserId = userIdOf(n.user_id, 'user_id');
  const type = WHOOP_TYPE.exec(n.type);
  if (!type) return [{ kind: 'ignored', providerUserId }];
  const notificationId = typeof n.trace_id === 'string' && n.trace_id ? `whoop:${n.trace_id}` : `whoop:${digest(body.toString('utf8'))}`;
  return [{ kind: 'changed', providerUserId, dataType: type[1]!, window: windowAround(now, now, 2 * DAY), notificationId }];
}

/**
 * Fitbit: a list of `{collectionType, date, ownerId, subscriptionId}`. A collection the connector
 * pulls names its data types (the pull maps it); `userRevokedAccess` is the user withdrawing the
 * app. Fitbit names no delivery, and tells of one day's changes again with the same words: an
 * item is named by its content and the hour it arrived in, so a redelivery within the hour queues
 * nothing more and a later change of the same day queues a new run.
 */
export function fitbitNotification(body: Buffer, now: Date): NotificationItem[] {
  const list = json(body);
  if (!Array.isArray(list) || list.length === 0) throw new MalformedNotification('a Fitbit notification is a non-empty list');
  const hour = now.toISOString().slice(0, 13);
  return list.map((n): NotificationItem => {
    if (!isObject(n) || typeof n.collectionType !== 'string') throw new MalformedNotification('each item has collectionType, date, ownerId and subscriptionId');
    const providerUserId = userIdOf(n.ownerId, 'ownerId');
    const notificationId = `fitbit:${digest(JSON.stringify([n.collectionType, n.date ?? null, providerUserId, n.subscriptionId ?? null]), hour)}`;
    if (n.collectionType === 'userRevokedAccess') return { kind: 'deauthorized', providerUserId, notificationId };
    if (typeof n.date !== 'string') throw new MalformedNotification('each item has collectionType, date, ownerId and subscriptionId');
    const window = localDayWindow(n.date, now);
    if (!COLLECTIONS[n.collectionType]) return { kind: 'ignored', providerUserId };
    return { kind: 'changed', providerUserId, dataType: n.collectionType, window, notificationId };
  });
}

/** Withings notification categories (`appli`) and the connector's data types each one changes. */
export const WITHINGS_APPLI: Readonly<Record<string, readonly string[]>> = {
  '1': ['measure'], // weight and body composition
  '2': ['measure'], // temperature
  '4': ['measure'], // blood pressure, heart rate, SpO2
  '16': ['activity', 'workouts'],
  '44': ['sleep'],
};
/** `appli` 46 is an action on the user's account; `unlink` and `delete` end the connection. */
const WITHINGS_USER_ACTION = '46';

/** Withings: form fields `userid, appli, startdate, enddate` (or `date`), plus `action` for account changes. */
export function withingsNotification(form: URLSearchParams, now: Date): NotificationItem[] {
  const appli = form.get('appli') ?? '';
  if (!/^\d{1,3}$/.test(appli)) throw new MalformedNotification('a Withings notification has userid and appli');
  const providerUserId = userIdOf(form.get('userid'), 'userid');
  const fields = [...form.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`);
  const notificationId = `withings:${digest(...fields)}`;
  if (appli === WITHINGS_USER_ACTION) {
    const action = form.get('action');
    return action === 'unlink' || action === 'delete' ? [{ kind: 'deauthorized', providerUserId, notificationId }] : [{ kind: 'ignored', providerUserId }];
  }
  const types = WITHINGS_APPLI[appli];
  let window: { start: Date; end: Date };
  const start = form.get('startdate');
  const date = form.get('date');
  if (start !== null) {
    const end = form.get('enddate') ?? start;
    if (!/^\d{1,12}$/.test(start) || !/^\d{1,12}$/.test(end) || Number(end) < Number(start)) throw new MalformedNotification('startdate and enddate are epoch seconds, in order');
    const from = Number(start) * 1000 - HOUR;
    const to = Math.min(Number(end) * 1000 + HOUR, now.getTime());
    window = { start: new Date(Math.min(from, to - HOUR)), end: new Date(to) };
  } else if (date !== null) {
    window = localDayWindow(date, now);
  } else {
    throw new MalformedNotification('a Withings notification has startdate and enddate, or date');
  }
  if (!types) return [{ kind: 'ignored', providerUserId }];
  return types.map((dataType) => ({ kind: 'changed', providerUserId, dataType, window, notificationId: types.length > 1 ? `${notificationId}:${dataType}` : notificationId }));
}

/**
 * Strava: `{object_type, object_id, aspect_type, owner_id, subscription_id, event_time, updates}`.
 * An activity's event (its start is not in it) pulls the two days before the event; the athlete
 * withdrawing the app (`updates.authorized` "false") ends the connection; other athlete updates
 * are ignored.
 */
export function stravaNotification(body: Buffer, now: Date): NotificationItem[] {
  const n = json(body);
  if (!isObject(n) || typeof n.object_type !== 'string' || typeof n.aspect_type !== 'string' || typeof n.event_time !== 'number' || !Number.isFinite(n.event_time)) {
    throw new MalformedNotification('a Strava event has object_type, object_id, aspect_type, owner_id, subscription_id and event_time');
  }
  const providerUserId = userIdOf(n.owner_id, 'owner_id');
  const notificationId = `strava:${digest(body.toString('utf8'))}`;
  if (n.object_type === 'athlete') {
    const updates = isObject(n.updates) ? n.updates : {};
    return String(updates.authorized) === 'false' ? [{ kind: 'deauthorized', providerUserId, notificationId }] : [{ kind: 'ignored', providerUserId }];
  }
  if (n.object_type !== 'activity') return [{ kind: 'ignored', providerUserId }];
  return [{ kind: 'changed', providerUserId, dataType: 'activities', window: windowAround(new Date(n.event_time * 1000), now, 2 * DAY), notificationId }];
}
