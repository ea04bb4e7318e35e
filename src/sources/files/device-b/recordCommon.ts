import type { Metadata, NormalizedRecord, ParseItem, Provenance, QuantityRecord, RejectedItem } from '../../../../commands/ingestion/records.js';
import { isObject, RecordError, textOf, type Json } from '../../shared/recordError.js';
import { healthConnectDeviceKind, isBodyWorn, vendorOf } from '../../shared/vendors.js';
import { iso, zoneMetadata, type Frame } from './healthConnectTimes.js';
import { isManualEntry } from './vocabulary.js';

/** What every Health Connect record has (identity, provenance, metadata as sent), and the items a record becomes. */

const MAX_EXCERPT_BYTES = 1024;

function truncateUtf8(s: string, maxBytes: number): string {
  if (s.length * 3 <= maxBytes) return s;
  let cut = s.slice(0, maxBytes);
  let bytes = Buffer.byteLength(cut, 'utf8');
  while (bytes > maxBytes) {
    cut = cut.slice(0, cut.length - Math.max(1, Math.floor((bytes - maxBytes) / 3)));
    bytes = Buffer.byteLength(cut, 'utf8');
  }
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut;
}

export function excerptOf(v: unknown): string {
  return truncateUtf8(textOf(v), MAX_EXCERPT_BYTES);
}

export type Common = {
  id: string;
  pkg: string | null;
  provenance: Provenance;
  sample: { source_name: null; source_bundle_id: string | null; device_model: string | null; product_type: null; was_user_entered: boolean };
  /** Provider fields as sent: Health Connect's metadata object's fields plus the record's own unread fields. */
  metadata: Metadata;
};

/** Fields of every record that the parser reads itself (the rest go to metadata as sent). */
export const FRAME_FIELDS = new Set(['recordType', 'metadata', 'time', 'startTime', 'endTime', 'zoneOffset', 'startZoneOffset', 'endZoneOffset']);

export function recordTypeOf(v: unknown): string {
  if (typeof v !== 'string' || !v.trim()) throw new RecordError('recordType is missing');
  // Also accepts "HeartRateRecord" and "androidx.health.connect.client.records.HeartRateRecord".
  const short = v.trim().slice(v.trim().lastIndexOf('.') + 1);
  return short.endsWith('Record') && short.length > 'Record'.length ? short.slice(0, -'Record'.length) : short;
}

export function common(rec: Json, provider: string, consumed: readonly string[]): Common {
  const meta = rec.metadata;
  if (!isObject(meta)) throw new RecordError('metadata is missing');
  const id = meta.id;
  if (typeof id !== 'string' || !id.trim()) throw new RecordError('metadata.id is missing');
  const origin = meta.dataOrigin;
  if (origin !== undefined && origin !== null && !isObject(origin)) throw new RecordError('metadata.dataOrigin is not an object');
  const pkgRaw = isObject(origin) ? origin.packageName : undefined;
  if (pkgRaw !== undefined && pkgRaw !== null && typeof pkgRaw !== 'string') throw new RecordError('metadata.dataOrigin.packageName is not a string');
  const pkg = pkgRaw ? pkgRaw : null;
  const dev = meta.device;
  if (dev !== undefined && dev !== null && !isObject(dev)) throw new RecordError('metadata.device is not an object');
  const manufacturer = isObject(dev) && typeof dev.manufacturer === 'string' && dev.manufacturer.trim() ? dev.manufacturer.trim() : null;
  const model = isObject(dev) && typeof dev.model === 'string' && dev.model.trim() ? dev.model.trim() : null;
  const deviceType = isObject(dev) ? dev.type : undefined;
  if (deviceType !== undefined && deviceType !== null && typeof deviceType !== 'number' && typeof deviceType !== 'string') {
    throw new RecordError('metadata.device.type is not an int or a name');
  }
  const device =
    manufacturer && model
      ? model.toLowerCase().startsWith(manufacturer.toLowerCase())
        ? model
        : `${manufacturer} ${model}`
      : (manufacturer ?? model);

  const metadata: Metadata = { ...meta };
  const skip = new Set([...FRAME_FIELDS, ...consumed]);
  for (const [k, v] of Object.entries(rec)) if (!skip.has(k)) metadata[k] = v;

  return {
    id,
    pkg,
    provenance: {
      provider,
      source: vendorOf(pkg, provider),
      device,
      body_worn: isBodyWorn(healthConnectDeviceKind(deviceType as number | string | null | undefined)),
    },
    sample: { source_name: null, source_bundle_id: pkg, device_model: model, product_type: null, was_user_entered: isManualEntry(meta.recordingMethod) },
    metadata,
  };
}


export function quantity(
  c: Common,
  f: Frame,
  externalId: string,
  type: string,
  v: { value: number; unit: string; original: { value: number; unit: string } | null },
  start = f.start,
  end = f.end,
): QuantityRecord {
  return {
    kind: 'quantity',
    ...c.provenance,
    external_id: externalId,
    type,
    value: v.value,
    unit: v.unit,
    start_date: iso(start),
    end_date: iso(end),
    ...c.sample,
    metadata: {
      ...c.metadata,
      ...zoneMetadata(f),
      // The spec lists both for every sample: what arrived, converted or not.
      original_value: v.original ? v.original.value : v.value,
      original_unit: v.original ? v.original.unit : v.unit,
    },
  };
}

export const rec = (r: NormalizedRecord): ParseItem => ({ record: r });

export function rejectItem(index: number, reason: string, excerptSource: unknown): ParseItem {
  const rejected: RejectedItem = { location: `record ${index + 1}`, reason, excerpt: excerptOf(excerptSource) };
  return { rejected };
}

export function bodyRejected(reason: string, excerpt: string): ParseItem {
  return { rejected: { location: 'body', reason, excerpt: truncateUtf8(excerpt, MAX_EXCERPT_BYTES) } };
}
