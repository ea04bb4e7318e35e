import { createHash } from 'node:crypto';
import { JSONParser } from '@streamparser/json';
import { DomainError } from '../../../../commands/shared/domainError.js';
import type { PushedPayload } from '../../shared/pullConnector.js';
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

/**
 * At most this many items (elements of the body's top-level lists) per notification, whatever
 * the body's size: past it the delivery is refused whole (413). Garmin batches a few users'
 * summaries per notification; a day of epochs is 96 items per user, a 90-day backfill of them
 * under 9,000, so real deliveries stay far below.
 */
export const MAX_NOTIFICATION_ITEMS = 100_000;
/** Text handed to the JSON parser at a time: each write is a bounded step. */
export const PIECE_BYTES = 64 * 1024;

/** The notification holds more items than MAX_NOTIFICATION_ITEMS (the route answers 413). */
export class NotificationTooLarge extends Error {
  override name = 'NotificationTooLarge';
}

const SUMMARY_KEYS: ReadonlySet<string> = new Set(SUMMARY_TYPES);
const ACCOUNT_KEYS: ReadonlySet<string> = new Set(ACCOUNT_NOTIFICATIONS);
const USER_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const invalid = (message: string) => new DomainError('invalid', message);

/** One user's summaries of one type: the part's body written as its summaries are read, with the span they cover. */
type Part = { dataType: SummaryType; providerUserId: string; body: ByteBuilder; items: number; start: number; end: number };

/**
 * Bytes appended in place (capacity doubled when full): a part's body is built while the
 * summaries arrive, so finishing it costs no join or encoding of the whole at once.
 */
class ByteBuilder {
  private buf = Buffer.allocUnsafe(256);
  private length = 0;

  append(text: string): void {
    const needed = this.length + Buffer.byteLength(text);
    if (needed > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, this.buf.length * 2));
      this.buf.copy(grown, 0, 0, this.length);
      this.buf = grown;
    }
    this.length += this.buf.write(text, this.length);
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/**
 * Splits the body Garmin POSTs (`{"dailies": [...]}`, one key per summary type, possibly several)
 * into one payload per user and summary type, each `{"<type>": [that user's summaries]}` with the
 * summaries as sent. A body Garmin's documentation does not allow (not a JSON object of lists of
 * objects with a `userId`, or no key Garmin sends) is refused whole: Garmin then sees a 400 and
 * does not retry; nothing of it is stored.
 *
 * Push-based, so the route parses as the bytes arrive, in bounded steps: `write` takes the body
 * in chunks of any size (a chunk may end inside a UTF-8 sequence or a value) and hands the text
 * to a streaming JSON parser in pieces of PIECE_BYTES; each summary is written at once into its
 * part's body, the part found by one map lookup (linear in the items, whatever the users); the
 * parsed values are let go as soon as they are read. `end` then only digests each part (native
 * SHA-256, about 20 ms for 16 MiB). `write` and `end` throw the DomainError('invalid') of a body
 * Garmin does not send, or NotificationTooLarge.
 */
export class NotificationSplitter {
  private readonly parser = new JSONParser({ paths: ['$', '$.*', '$.*.*'], keepStack: false });
  private readonly parts = new Map<string, Part>();
  private readonly accountChanges: AccountChange[] = [];
  private pings = 0;
  private items = 0;
  private knownKeys = 0;
  private sawValue = false;
  private failure: Error | null = null;

  constructor() {
    // Nothing in here may throw: the parser would report the exception as invalid JSON.
    this.parser.onValue = ({ value, key, parent, stack }) => {
      if (this.failure) return;
      if (stack.length === 0) {
        if (!isObject(value)) this.fail(invalid('the body is not a JSON object'));
        return;
      }
      if (Array.isArray(stack[0]!.value)) {
        this.fail(invalid('the body is not a JSON object'));
        return;
      }
      const top = stack.length === 1 ? String(key) : String(stack[1]!.key);
      const known = SUMMARY_KEYS.has(top) || ACCOUNT_KEYS.has(top);
      if (stack.length === 1) {
        // A top-level member, already emptied below as its items were read.
        if (known && !Array.isArray(value)) this.fail(invalid(`${top} is not a list`));
        else if (known) this.knownKeys++;
        if (isObject(parent)) delete parent[String(key)];
        return;
      }
      // An item of a top-level member: dropped from its list once read, which bounds the memory.
      if (Array.isArray(parent)) parent.pop();
      else if (isObject(parent)) delete parent[String(key)];
      if (++this.items > MAX_NOTIFICATION_ITEMS) {
        this.fail(new NotificationTooLarge(`a notification holds at most ${MAX_NOTIFICATION_ITEMS} items`));
        return;
      }
      if (known && Array.isArray(parent)) this.item(top, Number(key), value);
    };
    this.parser.onError = () => this.fail(invalid('the body is not JSON'));
  }

  write(chunk: Buffer): void {
    for (let i = 0; i < chunk.length && !this.failure; i += PIECE_BYTES) this.bytes(chunk.subarray(i, i + PIECE_BYTES));
    if (this.failure) throw this.failure;
  }

  end(): GarminNotification {
    if (!this.failure && !this.parser.isEnded) this.parser.end();
    if (this.failure) throw this.failure;
    // JSON.parse refuses an empty or all-whitespace body; the streaming parser just sees no value.
    if (!this.sawValue) throw invalid('the body is not JSON');
    if (this.knownKeys === 0) throw invalid(`the body names no Garmin notification type (one of ${[...SUMMARY_TYPES, ...ACCOUNT_NOTIFICATIONS].join(', ')})`);
    const payloads: GarminNotification['payloads'] = [];
    for (const part of this.parts.values()) {
      part.body.append(']}');
      const body = part.body.bytes();
      payloads.push({
        dataType: part.dataType,
        body,
        contentType: 'application/json',
        ref: `push:${part.dataType}:${createHash('sha256').update(body).digest('hex')}`,
        providerUserId: part.providerUserId,
        window: Number.isFinite(part.start) ? { start: new Date(part.start), end: new Date(Math.max(part.end, part.start + 1000)) } : null,
      });
    }
    this.parts.clear();
    return { payloads, accountChanges: this.accountChanges, pings: this.pings };
  }

  private bytes(b: Buffer): void {
    if (!this.sawValue && b.some((c) => c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d)) this.sawValue = true;
    this.parser.write(b);
  }

  private fail(err: Error): void {
    this.failure ??= err;
  }

  private item(key: string, index: number, item: unknown): void {
    if (!isObject(item)) return this.fail(invalid(`${key}[${index}] is not an object`));
    const userId = item.userId;
    if (typeof userId !== 'string' || !USER_ID.test(userId)) return this.fail(invalid(`${key}[${index}].userId is missing or not a Garmin user id`));
    if (ACCOUNT_KEYS.has(key)) {
      const permissions = Array.isArray(item.permissions) ? item.permissions.filter((p): p is string => typeof p === 'string') : null;
      this.accountChanges.push({ kind: key as AccountNotification, providerUserId: userId, permissions });
      return;
    }
    if (typeof item.callbackURL === 'string') {
      this.pings++;
      return;
    }
    const id = `${key}\n${userId}`;
    let part = this.parts.get(id);
    if (!part) {
      part = { dataType: key as SummaryType, providerUserId: userId, body: new ByteBuilder(), items: 0, start: Infinity, end: -Infinity };
      part.body.append(`{${JSON.stringify(key)}:[`);
      this.parts.set(id, part);
    }
    // As JSON.stringify({[key]: summaries}) would write it: a redelivery makes the same bytes, hence the same ref.
    part.body.append(part.items++ === 0 ? JSON.stringify(item) : `,${JSON.stringify(item)}`);
    const span = spanOf(item);
    if (span) {
      part.start = Math.min(part.start, span.from);
      part.end = Math.max(part.end, span.to);
    }
  }
}

/** Splits a whole body at once (the connector's `receive`, tests). */
export function splitNotification(body: Buffer): GarminNotification {
  const splitter = new NotificationSplitter();
  splitter.write(body);
  return splitter.end();
}

/** The span one summary covers: from its start to start + duration (a calendar date: the day). */
function spanOf(s: Record<string, unknown>): { from: number; to: number } | null {
  const inner = isObject(s.summary) ? s.summary : s;
  const t = [inner.startTimeInSeconds, inner.measurementTimeInSeconds].find((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const from = t !== undefined ? t * 1000 : typeof s.calendarDate === 'string' ? Date.parse(`${s.calendarDate}T00:00:00Z`) : NaN;
  if (!Number.isFinite(from)) return null;
  const duration = typeof inner.durationInSeconds === 'number' && inner.durationInSeconds > 0 ? inner.durationInSeconds * 1000 : t === undefined ? 86_400_000 : 0;
  return { from, to: from + duration };
}
