import { isObject } from '../../shared/recordError.js';
import { DAY, digest, json, MalformedNotification, type NotificationItem, userIdOf, windowAround } from '../../shared/providerNotifications.js';

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
