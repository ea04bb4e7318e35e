import { RecordError } from '../../shared/recordError.js';
import { parseHealthKitDate } from '../device-a/healthKitDates.js';
import { excerptOf } from '../device-a/lineFields.js';
import type { ParseItem } from '../../../../commands/ingestion/records.js';
import { deviceInfoOf } from './deviceString.js';
import { flat } from './flatString.js';
import type { XmlElement } from './exportXmlReader.js';

/**
 * What every export.xml element shares, mapped to device-a's line fields
 * (docs/formats/device-a.md): dates, source, device and metadata.
 */

export type Obj = Record<string, unknown>;

export function fail(reason: string): never {
  throw new RecordError(reason);
}

/**
 * iOS 8 and 9 wrote dates compactly (`20150915113529+0200`); later versions as
 * `2015-09-15 11:35:29 +0200`. Both become the second form, which device-a's date parser reads.
 */
export function dateText(s: string | undefined): string | undefined {
  if (s !== undefined && s.length === 19 && (s.charCodeAt(14) === 43 || s.charCodeAt(14) === 45) && /^\d{14}[+-]\d{4}$/.test(s)) {
    return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)} ${s.slice(8, 10)}:${s.slice(10, 12)}:${s.slice(12, 14)} ${s.slice(14)}`;
  }
  return s;
}

/** Epoch ms of an export date (NaN when it is not one), for ids and derived times. */
export function instantOf(s: string | undefined): number {
  return parseHealthKitDate(dateText(s));
}

/**
 * A date as device-a's canonical UTC form when it is one, else as written (device-a then rejects it
 * with its reason). Converted here once: device-a takes `…T08:00:00.000Z` without building a Date.
 */
export function isoDate(s: string | undefined): string | undefined {
  if (s !== undefined && s.length === 25) {
    // `2024-01-01 08:00:00 +0100`, a whole-hour offset: the minutes and seconds stay, only the
    // hour (and maybe the day) moves, so the UTC hour is looked up once per hour and offset.
    const hour = s.slice(0, 13) + s.slice(19);
    const utc = hourCache.get(hour);
    if (utc !== undefined && validMinuteSecond(s)) return `${utc}:${s.slice(14, 19)}.000Z`;
  }
  const ms = instantOf(s);
  if (Number.isNaN(ms)) return dateText(s);
  const iso = new Date(ms).toISOString();
  if (s!.length === 25 && s!.endsWith('00') && s!.charCodeAt(10) === 32 && s!.charCodeAt(19) === 32) {
    if (hourCache.size >= 4096) hourCache.clear();
    hourCache.set(flat(s!.slice(0, 13) + s!.slice(19)), flat(iso.slice(0, 13)));
  }
  return iso;
}

/** Export hour (`2024-01-01 08` + ` +0100`) → UTC `2024-01-01T07`; bounded, cleared when full. */
const hourCache = new Map<string, string>();

function validMinuteSecond(s: string): boolean {
  const m1 = s.charCodeAt(14) - 48;
  const m2 = s.charCodeAt(15) - 48;
  const s1 = s.charCodeAt(17) - 48;
  const s2 = s.charCodeAt(18) - 48;
  return s.charCodeAt(16) === 58 && m1 >= 0 && m1 <= 5 && m2 >= 0 && m2 <= 9 && s1 >= 0 && s1 <= 5 && s2 >= 0 && s2 <= 9;
}

/** A number as export.xml writes it; NaN for an absent or empty attribute (Number('') would be 0). */
export function numberOf(s: string | undefined): number {
  if (s === undefined) return NaN;
  const n = Number(s);
  return s.trim() === '' ? NaN : n;
}

/** Attributes each element reads itself; any other attribute is metadata (iOS 8/9 wrote metadata as attributes). */
const SOURCE_ATTRIBUTES = ['sourceName', 'source', 'sourceVersion', 'device', 'creationDate', 'startDate', 'endDate'];
export type KnownAttributes = ReadonlySet<string>;
/** The attributes an element kind reads itself, with the source and date attributes every kind has. */
export function knownAttributes(own: readonly string[]): KnownAttributes {
  return new Set([...own, ...SOURCE_ATTRIBUTES]);
}

/**
 * Source, device and metadata fields of a device-a line from an element: `sourceName` (iOS 8/9:
 * `source`), the parsed `device` (model → device_model, hardware → product_type, manufacturer for
 * the vendor), `MetadataEntry` children and leftover attributes into metadata, with
 * `source_version`, `creation_date` and the device's name and software version.
 * An element the XML parser reported damaged keeps, of the other attributes, only HealthKit's
 * own (`HK…`): the names of the rest may be fragments of what was written.
 */
export function provenanceFields(el: XmlElement, known: KnownAttributes): Obj {
  const a = el.attrs;
  const metadata: Obj = {};
  const damaged = el.errors !== null;
  for (const k in a) {
    // HealthKit's own keys (HK…) are single words, never fragments of a damaged name.
    if (!known.has(k) && (!damaged || k.startsWith('HK'))) metadata[k] = a[k];
  }
  if (damaged) metadata.xml_damaged = el.errors![0];
  for (const c of el.children) {
    if (c.name === 'MetadataEntry' && c.attrs.key !== undefined) metadata[c.attrs.key] = c.attrs.key === 'HKTimeZone' ? flat(c.attrs.value ?? '') : (c.attrs.value ?? '');
  }
  if (a.sourceVersion !== undefined) metadata.source_version = a.sourceVersion;
  // As written (the exporting phone's offset): parsing it for every record costs more than it tells.
  if (a.creationDate !== undefined) metadata.creation_date = a.creationDate;
  const d = deviceInfoOf(a.device);
  if (d.name !== null) metadata.device_name = d.name;
  if (d.software !== null) metadata.device_software = d.software;
  const start = isoDate(a.startDate);
  return {
    source_name: flat(a.sourceName ?? a.source ?? null),
    source_bundle_id: null,
    device_model: d.model,
    product_type: d.hardware,
    device_manufacturer: d.manufacturer,
    start_date: start,
    end_date: a.endDate === a.startDate ? start : isoDate(a.endDate),
    was_user_entered: metadata.HKWasUserEntered === '1' || metadata.HKWasUserEntered === 'true',
    metadata,
  };
}

/** The element's start tag as an excerpt of a rejected item (children left out), at most 1 KiB. */
export function excerptOfElement(el: XmlElement): string {
  let s = `<${el.name}`;
  for (const k in el.attrs) {
    s += ` ${k}="${el.attrs[k]!.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}"`;
    if (s.length > 1024) break;
  }
  return excerptOf(el.children.length ? `${s}>…` : `${s}/>`);
}

export function rejectedAt(location: string, reason: string, excerpt: string): ParseItem {
  return { rejected: { location, reason, excerpt } };
}
