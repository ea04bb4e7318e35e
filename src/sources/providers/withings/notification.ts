import { digest, HOUR, localDayWindow, MalformedNotification, type NotificationItem, userIdOf } from '../../shared/providerNotifications.js';

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
