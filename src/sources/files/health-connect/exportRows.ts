import type Database from 'better-sqlite3';
import type { Metadata, Provenance } from '../../../../commands/ingestion/records.js';
import { healthConnectDeviceKind, isBodyWorn, vendorOf } from '../../shared/vendors.js';
import { isManualEntry } from '../device-b/vocabulary.js';
import { RecordError } from '../../shared/recordError.js';
import { offsetText } from '../exportShared/localClock.js';
import { quoteIdentifier } from '../exportShared/untrustedSqlite.js';

/**
 * What every record row of Health Connect's database shares (the platform's RecordHelper,
 * IntervalRecordHelper and InstantRecordHelper columns): its identity, the app and device that
 * wrote it, how it was recorded, and its times. The app and device tables are small and read once.
 */

export type Row = Record<string, unknown>;
export type TableInfo = { name: string; columns: Set<string> };

/** Tables by lower-case name (SQLite table names are case-insensitive; the platform mixes cases). */
export function readTables(db: Database.Database): Map<string, TableInfo> {
  const tables = new Map<string, TableInfo>();
  const rows = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[];
  for (const { name } of rows) {
    const columns = (db.prepare(`PRAGMA table_xinfo(${quoteIdentifier(name)})`).all() as { name: string }[]).map((c) => c.name);
    tables.set(name.toLowerCase(), { name, columns: new Set(columns) });
  }
  return tables;
}

export function hasColumns(t: TableInfo | undefined, ...columns: string[]): t is TableInfo {
  return !!t && columns.every((c) => t.columns.has(c));
}

/** More apps or devices than this in one export is not a phone's database; the rest read as unknown. */
const MAX_APPS = 10_000;
const MAX_DEVICES = 100_000;

type App = { packageName: string | null; appName: string | null };
type Device = { manufacturer: string | null; model: string | null; type: number | null };

export type Origin = {
  provenance: Provenance;
  sample: { source_name: string | null; source_bundle_id: string | null; device_model: string | null; product_type: null };
  /** The app's package name (workouts take summaries from records of the same app). */
  packageName: string | null;
  metadata: Metadata;
};

/** The provenance of every row, from application_info_table and device_info_table. */
export class Origins {
  private readonly apps = new Map<number, App>();
  private readonly devices = new Map<number, Device>();
  private readonly cache = new Map<string, Origin>();

  constructor(
    db: Database.Database,
    tables: Map<string, TableInfo>,
    private readonly provider: string,
  ) {
    const apps = tables.get('application_info_table');
    if (hasColumns(apps, 'row_id', 'package_name')) {
      const name = apps.columns.has('app_name') ? 'app_name' : 'NULL';
      for (const r of db.prepare(`SELECT row_id, package_name, ${name} AS app_name FROM ${quoteIdentifier(apps.name)} ORDER BY row_id LIMIT ${MAX_APPS}`).iterate() as Iterable<Row>) {
        if (isInt(r.row_id)) this.apps.set(r.row_id, { packageName: text(r.package_name), appName: text(r.app_name) });
      }
    }
    const devices = tables.get('device_info_table');
    if (hasColumns(devices, 'row_id')) {
      const col = (c: string) => (devices.columns.has(c) ? c : `NULL AS ${c}`);
      const sql = `SELECT row_id, ${col('manufacturer')}, ${col('model')}, ${col('device_type')} FROM ${quoteIdentifier(devices.name)} ORDER BY row_id LIMIT ${MAX_DEVICES}`;
      for (const r of db.prepare(sql).iterate() as Iterable<Row>) {
        if (isInt(r.row_id)) this.devices.set(r.row_id, { manufacturer: text(r.manufacturer), model: text(r.model), type: isInt(r.device_type) ? r.device_type : null });
      }
    }
  }

  of(appInfoId: unknown, deviceInfoId: unknown): Origin {
    const key = `${String(appInfoId)}:${String(deviceInfoId)}`;
    let o = this.cache.get(key);
    if (o) return o;
    const app = isInt(appInfoId) ? this.apps.get(appInfoId) : undefined;
    const dev = isInt(deviceInfoId) ? this.devices.get(deviceInfoId) : undefined;
    const manufacturer = dev?.manufacturer ?? null;
    const model = dev?.model ?? null;
    const device = manufacturer && model ? (model.toLowerCase().startsWith(manufacturer.toLowerCase()) ? model : `${manufacturer} ${model}`) : (manufacturer ?? model);
    const pkg = app?.packageName ?? null;
    o = {
      provenance: { provider: this.provider, source: vendorOf(pkg, this.provider), device, body_worn: isBodyWorn(healthConnectDeviceKind(dev?.type ?? null)) },
      sample: { source_name: app?.appName ?? null, source_bundle_id: pkg, device_model: model, product_type: null },
      packageName: pkg,
      metadata: {
        dataOrigin: { packageName: pkg },
        ...(app?.appName ? { app_name: app.appName } : {}),
        ...(dev ? { device: { manufacturer, model, type: dev.type } } : {}),
      },
    };
    if (this.cache.size < 100_000) this.cache.set(key, o);
    return o;
  }
}

/** The columns every record table has, read with the row (absent ones read as NULL). */
export const COMMON_COLUMNS = ['row_id', 'uuid', 'last_modified_time', 'client_record_id', 'client_record_version', 'app_info_id', 'device_info_id', 'recording_method'] as const;

export function selectList(table: TableInfo, columns: readonly string[], alias = ''): string {
  const p = alias ? `${alias}.` : '';
  return columns.map((c) => (table.columns.has(c) ? `${p}${quoteIdentifier(c)}` : `NULL AS ${quoteIdentifier(c)}`)).join(', ');
}

/** The record's id: Health Connect stores `metadata.id` as 16 raw bytes (database version 9 on). */
export function recordId(row: Row): string {
  const u = row.uuid;
  if (Buffer.isBuffer(u) && u.length === 16) {
    const h = u.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  if (typeof u === 'string' && /^[0-9a-f-]{32,36}$/i.test(u.trim())) return u.trim().toLowerCase();
  throw new RecordError('uuid is missing or not 16 bytes');
}

export type Times = { start: number; end: number; zone: string | undefined; endZone: string | undefined };

export function instantTimes(row: Row): Times {
  const t = epochMs(row.time, 'time');
  const zone = zoneOf(row.zone_offset, 'zone_offset');
  return { start: t, end: t, zone, endZone: zone };
}

export function intervalTimes(row: Row, strict = false): Times {
  const start = epochMs(row.start_time, 'start_time');
  const end = epochMs(row.end_time, 'end_time');
  if (strict ? end <= start : end < start) throw new RecordError(`end_time is ${strict ? 'not after' : 'before'} start_time`);
  return { start, end, zone: zoneOf(row.start_zone_offset, 'start_zone_offset'), endZone: zoneOf(row.end_zone_offset, 'end_zone_offset') };
}

export function epochMs(v: unknown, column: string): number {
  if (v === null || v === undefined) throw new RecordError(`${column} is missing`);
  if (!isInt(v) || v < 0 || v > 8.64e15) throw new RecordError(`${column} ${JSON.stringify(String(v)).slice(0, 40)} is not epoch milliseconds`);
  return v;
}

/** Zone offsets are stored in seconds. */
function zoneOf(v: unknown, column: string): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (!isInt(v) || Math.abs(v) > 18 * 3600) throw new RecordError(`${column} ${JSON.stringify(String(v)).slice(0, 40)} is not a zone offset in seconds`);
  return offsetText(v * 1000);
}

export function zoneMetadata(t: Times): Metadata {
  const m: Metadata = {};
  if (t.zone !== undefined) m.timezone = t.zone;
  if (t.endZone !== undefined && t.endZone !== t.zone) m.end_timezone = t.endZone;
  return m;
}

/** The record's own metadata as Jetpack names it (device-b keeps the same keys), plus where it was read. */
export function rowMetadata(table: TableInfo, row: Row, id: string, origin: Origin): Metadata {
  return {
    id,
    ...origin.metadata,
    lastModifiedTime: isInt(row.last_modified_time) ? new Date(row.last_modified_time).toISOString() : null,
    clientRecordId: text(row.client_record_id),
    clientRecordVersion: row.client_record_version ?? null,
    recordingMethod: isInt(row.recording_method) ? row.recording_method : null,
    table: table.name,
    row_id: row.row_id,
  };
}

export function manual(row: Row): boolean {
  return isManualEntry(row.recording_method);
}

export function location(table: TableInfo, row: Row): string {
  return `${table.name}:rowid ${String(row.row_id)}`;
}

export function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

export function text(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/** A row as JSON for a rejected item's excerpt: blobs as their size, internal join columns left out. */
export function rowExcerpt(row: Row): string {
  const plain: Row = {};
  for (const [k, v] of Object.entries(row)) {
    if (k.startsWith('__')) continue;
    plain[k] = Buffer.isBuffer(v) ? (k === 'uuid' && v.length === 16 ? v.toString('hex') : `<blob ${v.length} bytes>`) : typeof v === 'bigint' ? v.toString() : v;
  }
  return JSON.stringify(plain);
}
