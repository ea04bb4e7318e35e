import { isObject } from '../../shared/recordError.js';
import { DAY, digest, json, MalformedNotification, type NotificationItem, userIdOf, windowAround } from '../../shared/providerNotifications.js';
import { oura } from './provider.js';

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
