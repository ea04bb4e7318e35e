import { isObject } from '../../shared/recordError.js';
import { DAY, digest, json, MalformedNotification, type NotificationItem, userIdOf, windowAround } from '../../shared/providerNotifications.js';

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
