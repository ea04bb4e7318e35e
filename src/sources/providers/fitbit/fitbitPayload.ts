import type { Metadata, ParseItem, QuantityRecord } from '../../../../commands/ingestion/records.js';
import { excerptOf, quantity as sharedQuantity } from '../../shared/connectorRecords.js';
import { isObject, RecordError, type Json } from '../../shared/recordError.js';
import { jsonEnvelope } from '../../shared/jsonEnvelope.js';
import { localZone, type LocalZone, type ZonedInstant } from '../../shared/zonedLocalTime.js';

export const PROVIDER = 'fitbit';

/**
 * Fitbit answers times in the user's local time without an offset. Each stored payload is the
 * answer as sent, wrapped with the zone the user's profile gave when it was pulled
 * (`timezone`, `offsetFromUTCMillis`), so every later parse reads the same instants.
 */
export type ProfileZone = { timezone: string | null; offsetFromUTCMillis: number };

/** `date` names the local day an answer is about when the answer itself does not (the daily activity summary). */
export function wrapAnswer(zone: ProfileZone, answer: Buffer, date?: string): Buffer {
  return jsonEnvelope(date === undefined ? { zone, answer } : { zone, date, answer });
}

export type FitbitPayload = { zone: LocalZone; date: unknown; answer: unknown };

export function unwrapAnswer(body: Buffer): FitbitPayload {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new RecordError('the payload is not JSON');
  }
  if (!isObject(parsed) || !('answer' in parsed)) throw new RecordError('the payload is not a Fitbit answer with its zone');
  const z = isObject(parsed.zone) ? parsed.zone : {};
  return { zone: localZone(z.timezone, z.offsetFromUTCMillis), date: parsed.date, answer: parsed.answer };
}

/** The metadata every Fitbit record carries: the zone its local times were read in. */
export function zoneMetadata(zone: LocalZone, at: ZonedInstant): Metadata {
  return { timezone: zone.name ?? at.offset, utc_offset: at.offset };
}

export type Worn = { device: string | null; body_worn: boolean };
export const TRACKER: Worn = { device: null, body_worn: true };

export function quantity(
  r: { id: string; type: string; value: number; unit: string; start: number; end: number; worn: Worn; manual?: boolean; metadata: Metadata },
): QuantityRecord {
  const q = sharedQuantity(
    { provider: PROVIDER, source: PROVIDER, device: r.worn.device, body_worn: r.worn.body_worn },
    { external_id: r.id, type: r.type, value: r.value, unit: r.unit, start: r.start, end: r.end, metadata: r.metadata, was_user_entered: r.manual ?? false },
  );
  return { ...q, source_name: 'Fitbit', device_model: r.worn.device };
}

/** A finite number, or a numeric string as Fitbit sends some values ("1698"); null when absent. */
export function num(v: unknown, field: string): number | null {
  if (v === undefined || v === null || v === '') return null;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new RecordError(`${field} ${JSON.stringify(v).slice(0, 40)} is not a number`);
  return n;
}

export function requireNum(v: unknown, field: string): number {
  const n = num(v, field);
  if (n === null) throw new RecordError(`${field} is missing`);
  return n;
}

export function arrayAt(v: unknown, field: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new RecordError(`${field} is not an array`);
  return v;
}

export function objectAt(v: unknown, field: string): Json {
  if (!isObject(v)) throw new RecordError(`${field} is not an object`);
  return v;
}

export function rejected(location: string, reason: string, excerpt: unknown): ParseItem {
  return { rejected: { location, reason, excerpt: excerptOf(excerpt) } };
}

/** Runs one record's decoding; a RecordError becomes a rejected item at `location`, anything else is a bug. */
export function each(location: string, item: unknown, decode: () => ParseItem[]): ParseItem[] {
  try {
    return decode();
  } catch (err) {
    if (!(err instanceof RecordError)) throw err;
    return [rejected(location, err.message, item)];
  }
}
