import type { Provenance } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/connectorRecords.js';
import { normalOffset, offsetMs } from '../../shared/providerTimes.js';
import { nextDate, zonedInstant, type LocalZone } from '../../shared/zonedLocalTime.js';

/**
 * Polar sends many times as local wall clock without an offset: an exercise's `start-time` (its
 * offset is beside it in minutes), a night's hypnogram and samples as "HH:MM" keys, a day's step
 * and heart rate samples as "HH:MM:SS". The pull stores the offset it learnt for the day with
 * such answers (src/sources/providers/polar/pull.ts); these helpers place the times with it.
 */
export function fixedZone(offset: string): LocalZone {
  const ms = offsetMs(offset);
  if (ms === null) throw new RecordError(`${JSON.stringify(offset)} is not a zone offset`);
  return { name: null, offsetMs: ms };
}

/** "+02:00" of an offset in minutes east of UTC (exercise `start-time-utc-offset`). */
export function offsetOfMinutes(minutes: number): string {
  const abs = Math.abs(minutes);
  return normalOffset(`${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`);
}

const CLOCK = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/;

/** Seconds since local midnight of "HH:MM" or "HH:MM:SS(.fff)". */
export function clockSeconds(v: string, field: string): number {
  const m = CLOCK.exec(v);
  if (!m || +m[1]! > 23 || +m[2]! > 59 || +(m[3] ?? 0) > 59) throw new RecordError(`${field} ${JSON.stringify(v).slice(0, 20)} is not a clock time HH:MM`);
  return +m[1]! * 3600 + +m[2]! * 60 + +(m[3] ?? 0);
}

/** The instant of a local clock time on a date at a fixed offset. */
export function clockOn(date: string, clock: string, zone: LocalZone, field: string): number {
  const s = clockSeconds(clock, field);
  const hh = String(Math.floor(s / 3600)).padStart(2, '0');
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return zonedInstant(`${date}T${hh}:${mm}:${ss}`, zone, field).ms;
}

/**
 * The instants of a night's "HH:MM" keys: in time order from the night's first local date, a key
 * earlier on the clock than the one before it has passed midnight.
 */
export function nightClock(firstDate: string, keys: readonly string[], zone: LocalZone, field: string): number[] {
  let date = firstDate;
  let previous = -1;
  return keys.map((k) => {
    const s = clockSeconds(k, `${field} ${k}`);
    if (previous >= 0 && s < previous) date = nextDate(date);
    previous = s;
    return clockOn(date, k, zone, `${field} ${k}`);
  });
}

export const POLAR: Pick<Provenance, 'provider' | 'source'> = { provider: 'polar', source: 'polar' };

/** Polar's watches, straps and bands are worn; physical information is what the user typed in Flow. */
export function polarProvenance(device: string | null, bodyWorn = true): Provenance {
  return { ...POLAR, device, body_worn: bodyWorn };
}

/**
 * Fields that say how an item was delivered (which transaction, whose link), not what it is: left
 * out of metadata so the same item offered in another transaction decodes to the same record.
 */
export const DELIVERY_FIELDS: readonly string[] = ['transaction-id', 'polar-user'];
