import { isObject } from '../../shared/recordError.js';
import { digest, HOUR, json, MalformedNotification, type NotificationItem, userIdOf, windowAround } from '../../shared/providerNotifications.js';
import { google } from './provider.js';

/**
 * A Google Health API notification to the subscriber endpoint (docs/connectors/google.md):
 * `{"type": "verification"}` when the subscriber is created (answered 201, nothing queued), or a
 * data change `{healthUserId, dataType, interval: {startTime, endTime}}`: a notification run of
 * that data type over the interval (an hour either side, never past now; a day back when the
 * interval is absent). Answers null for a verification.
 */
export function googleNotification(body: Buffer, now: Date): NotificationItem[] | null {
  const n = json(body);
  if (!isObject(n)) throw new MalformedNotification('a Google Health notification is a JSON object');
  if (n.type === 'verification') return null;
  const providerUserId = userIdOf(n.healthUserId, 'healthUserId');
  if (typeof n.dataType !== 'string') throw new MalformedNotification('a Google Health notification names its dataType');
  if (!google.dataTypes.includes(n.dataType as (typeof google.dataTypes)[number])) return [{ kind: 'ignored', providerUserId }];
  const id = `google:${digest(body.toString('utf8'))}`;
  const interval = isObject(n.interval) ? n.interval : null;
  if (!interval) return [{ kind: 'changed', providerUserId, dataType: n.dataType, window: windowAround(now, now, 24 * HOUR), notificationId: id }];
  const start = Date.parse(String(interval.startTime));
  const end = Date.parse(String(interval.endTime));
  if (!Number.isFinite(start) || !Number.isFinite(end) || end < start) throw new MalformedNotification('interval must hold startTime and endTime, in order');
  const to = Math.min(end + HOUR, now.getTime());
  // A change older than the sync's reach is still bounded: the window spans at most 31 days.
  const from = Math.max(Math.min(start - HOUR, to - HOUR), to - 31 * 24 * HOUR);
  return [{ kind: 'changed', providerUserId, dataType: n.dataType, window: { start: new Date(from), end: new Date(to) }, notificationId: id }];
}
