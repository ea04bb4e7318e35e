import { createHash } from 'node:crypto';

/** What the providers' change notifications share (each provider's own reading is in its folder: providers/<slug>/notification.ts). */

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

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex');
export const userIdOf = (v: unknown, what: string): string => {
  const id = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v;
  if (typeof id !== 'string' || !/^[A-Za-z0-9._:-]{1,128}$/.test(id)) throw new MalformedNotification(`${what} must name the provider's user`);
  return id;
};

/**
 * Windows never end after `now` (a run's window end is where the connection's data ends) and
 * always span at least an hour. `back`: how far before the change the data it names may start.
 */
export function windowAround(at: Date, now: Date, back: number): { start: Date; end: Date } {
  const end = Math.min(at.getTime() + HOUR, now.getTime());
  return { start: new Date(Math.min(at.getTime() - back, end - HOUR)), end: new Date(end) };
}

/** A provider's local day (Fitbit, Withings `date`) padded by 14 hours each side: every zone's day falls inside. */
export function localDayWindow(day: string, now: Date): { start: Date; end: Date } {
  const start = Date.parse(`${day}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || !Number.isFinite(start)) throw new MalformedNotification('date must be YYYY-MM-DD');
  const end = Math.min(start + DAY + 14 * HOUR, now.getTime());
  return { start: new Date(Math.min(start - 14 * HOUR, end - HOUR)), end: new Date(end) };
}

export function json(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new MalformedNotification('the body is not JSON');
  }
}
