import { isObject } from '../../shared/recordError.js';
import { digest, json, localDayWindow, MalformedNotification, type NotificationItem, userIdOf } from '../../shared/providerNotifications.js';
import { COLLECTIONS } from './dataTypes.js';

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
