import { createHash } from 'node:crypto';
import { DomainError } from '../../../commands/shared/domainError.js';
import type { PushedPayload } from '../pullConnector.js';
import { isObject } from './fields.js';
import { ACCOUNT_NOTIFICATIONS, SUMMARY_TYPES, type AccountNotification, type SummaryType } from './vocabulary.js';

/** A registration change Garmin pushed: the user deregistered, or changed the permissions granted. */
export type AccountChange = { kind: AccountNotification; providerUserId: string; permissions: string[] | null };

/** One inbound Garmin request, split by user. */
export type GarminNotification = {
  /** Each with the time its summaries cover (the sync run's window); null when they name none. */
  payloads: (PushedPayload & { window: { start: Date; end: Date } | null })[];
  accountChanges: AccountChange[];
  /** Ping-mode items (a `callbackURL` to pull from): not supported, push mode must be configured. */
  pings: number;
};

const SUMMARY_KEYS: ReadonlySet<string> = new Set(SUMMARY_TYPES);
const ACCOUNT_KEYS: ReadonlySet<string> = new Set(ACCOUNT_NOTIFICATIONS);
const USER_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function invalid(message: string): never {
  throw new DomainError('invalid', message);
}

/**
 * Splits the body Garmin POSTs (`{"dailies": [...]}`, one key per summary type, possibly several)
 * into one payload per user and summary type, each `{"<type>": [that user's summaries]}` with the
 * summaries as sent. A body Garmin's documentation does not allow (not a JSON object of lists of
 * objects with a `userId`, or no key Garmin sends) is refused whole: Garmin then sees a 400 and
 * does not retry; nothing of it is stored.
 */
export function splitNotification(body: Buffer): GarminNotification {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    invalid('the body is not JSON');
  }
  if (!isObject(parsed)) invalid('the body is not a JSON object');
  const keys = Object.keys(parsed);
  const known = keys.filter((k) => SUMMARY_KEYS.has(k) || ACCOUNT_KEYS.has(k));
  if (known.length === 0) invalid(`the body names no Garmin notification type (one of ${[...SUMMARY_TYPES, ...ACCOUNT_NOTIFICATIONS].join(', ')})`);

  const payloads: GarminNotification['payloads'] = [];
  const accountChanges: AccountChange[] = [];
  let pings = 0;
  for (const key of known) {
    const items = parsed[key];
    if (!Array.isArray(items)) invalid(`${key} is not a list`);
    const byUser = new Map<string, unknown[]>();
    items.forEach((item: unknown, i: number) => {
      if (!isObject(item)) invalid(`${key}[${i}] is not an object`);
      const userId = item.userId;
      if (typeof userId !== 'string' || !USER_ID.test(userId)) invalid(`${key}[${i}].userId is missing or not a Garmin user id`);
      if (ACCOUNT_KEYS.has(key)) {
        const permissions = Array.isArray(item.permissions) ? item.permissions.filter((p): p is string => typeof p === 'string') : null;
        accountChanges.push({ kind: key as AccountNotification, providerUserId: userId, permissions });
        return;
      }
      if (typeof item.callbackURL === 'string') {
        pings++;
        return;
      }
      byUser.set(userId, [...(byUser.get(userId) ?? []), item]);
    });
    for (const [userId, summaries] of byUser) {
      const part = Buffer.from(JSON.stringify({ [key]: summaries }));
      payloads.push({
        dataType: key as SummaryType,
        body: part,
        contentType: 'application/json',
        ref: `push:${key}:${createHash('sha256').update(part).digest('hex')}`,
        providerUserId: userId,
        window: windowOf(summaries),
      });
    }
  }
  return { payloads, accountChanges, pings };
}

/** The span the summaries cover: from the earliest start to the latest start + duration. */
function windowOf(summaries: unknown[]): { start: Date; end: Date } | null {
  let start = Infinity;
  let end = -Infinity;
  for (const s of summaries) {
    if (!isObject(s)) continue;
    const inner = isObject(s.summary) ? s.summary : s;
    const t = [inner.startTimeInSeconds, inner.measurementTimeInSeconds].find((v): v is number => typeof v === 'number' && Number.isFinite(v));
    const from = t !== undefined ? t * 1000 : typeof s.calendarDate === 'string' ? Date.parse(`${s.calendarDate}T00:00:00Z`) : NaN;
    if (!Number.isFinite(from)) continue;
    const duration = typeof inner.durationInSeconds === 'number' && inner.durationInSeconds > 0 ? inner.durationInSeconds * 1000 : t === undefined ? 86_400_000 : 0;
    start = Math.min(start, from);
    end = Math.max(end, from + duration);
  }
  if (!Number.isFinite(start)) return null;
  return { start: new Date(start), end: new Date(Math.max(end, start + 1000)) };
}
