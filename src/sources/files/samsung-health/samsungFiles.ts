import type { Metadata, ParseItem, Provenance } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { vendorOf } from '../../shared/vendors.js';
import { csvTable, peekFirstChunk } from '../exportShared/csvTable.js';
import { offsetText } from '../exportShared/localClock.js';
import { readEntry } from '../exportShared/entryReading.js';
import { rejectedItem } from '../exportShared/unreadableExport.js';
import { baseName, type ArchiveEntry, type ZipArchive } from '../exportShared/zipArchive.js';

/**
 * Samsung Health's "Download personal data" CSV files: one file per data type, named
 * `<data type>.<export timestamp>.csv`. The first line names the data type, its schema version and
 * a count; the header follows, with many columns prefixed by the data type
 * (`com.samsung.health.heart_rate.heart_rate`); every data row ends with a comma. Times are UTC
 * (`2018-05-05 15:42:31.287`, the SDK's UTC milliseconds written out) with the wearer's offset in
 * a separate `time_offset` column (`UTC+0200`). Files under `jsons/` (binned series, routes) are
 * not read. docs/formats/samsung-health.md.
 */

const FILE_NAME = /^(com\.samsung\.[a-z0-9_.]+?)\.(\d{8,})\.csv$/i;

/** The data type a file holds, from its name; null for files that are not Samsung Health data CSVs. */
export function dataTypeOf(entry: ArchiveEntry): string | null {
  if (/(^|\/)jsons\//.test(entry.name)) return null;
  return FILE_NAME.exec(baseName(entry.name))?.[1]?.toLowerCase() ?? null;
}

export type SamsungRow = { line: number; values: Record<string, string | undefined> };

/** `com.samsung.health.heart_rate.start_time` → `start_time`; an unprefixed column of the same name keeps priority. */
function columnNames(header: string[]): string[] {
  const plain = new Set(header.filter((h) => !/^com\.samsung\./.test(h)));
  return header.map((h) => {
    if (!/^com\.samsung\./.test(h)) return h;
    const short = h.slice(h.lastIndexOf('.') + 1);
    return plain.has(short) ? h : short;
  });
}

/**
 * A data file's rows as named values, with every unreadable row (and a file that breaks part-way)
 * as a rejected item located `<entry path>:<line>`.
 */
export function samsungRows(archive: ZipArchive, entry: ArchiveEntry): AsyncGenerator<SamsungRow | ParseItem> {
  return readEntry<SamsungRow>(archive, entry, async function* (input) {
    // The metadata line (data type, schema version, count) comes first in every export seen; a
    // file re-saved without it starts with its header.
    const { head, stream } = await peekFirstChunk(input);
    const metadataLine = /^(\uFEFF)?com\.samsung\./i.test(head.subarray(0, 64).toString('utf8'));
    for await (const item of csvTable(stream, { skipLines: metadataLine ? 1 : 0, names: columnNames, trailingComma: true })) {
      if ('skipped' in item) yield rejectedItem(`${entry.name}:${item.skipped.line}`, item.skipped.reason, item.skipped.raw);
      else if ('values' in item) yield item;
    }
  });
}

export function isRow(item: SamsungRow | ParseItem): item is SamsungRow {
  return 'values' in item;
}

// ---------------------------------------------------------------------------------------------
// Cells

const UTC_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/;

/** A `YYYY-MM-DD HH:MM:SS.mmm` UTC time (or epoch milliseconds) → epoch milliseconds. */
export function utcTime(v: string | undefined, column: string): number {
  if (v === undefined) throw new RecordError(`${column} is missing`);
  if (/^\d{10,14}$/.test(v)) return Number(v);
  const m = UTC_TIME.exec(v);
  if (!m) throw new RecordError(`${column} ${JSON.stringify(v).slice(0, 40)} is not a time`);
  const [y, mo, d, h, mi, s] = [+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +m[6]!];
  const ms = m[7] ? +m[7].slice(0, 3).padEnd(3, '0') : 0;
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const back = new Date(t);
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) throw new RecordError(`${column} ${JSON.stringify(v)} is not a valid date and time`);
  return t;
}

/** `UTC+0530` (or milliseconds) → "+05:30"; null when absent. */
export function timeOffset(v: string | undefined): string | null {
  if (v === undefined) return null;
  const m = /^UTC([+-])(\d{2}):?(\d{2})$/.exec(v);
  if (m) {
    const ms = (m[1] === '-' ? -1 : 1) * (+m[2]! * 60 + +m[3]!) * 60_000;
    if (Math.abs(ms) <= 18 * 3_600_000) return offsetText(ms);
  }
  if (/^-?\d+$/.test(v) && Math.abs(Number(v)) <= 18 * 3_600_000) return offsetText(Number(v));
  throw new RecordError(`time_offset ${JSON.stringify(v).slice(0, 40)} is not an offset such as UTC+0100`);
}

export function cell(v: string | undefined, column: string, { min = -Infinity, max = Infinity } = {}): number | null {
  if (v === undefined) return null;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new RecordError(`${column} ${JSON.stringify(v).slice(0, 40)} is not a number`);
  if (n < min || n > max) throw new RecordError(`${column} ${n} is outside ${min}..${max}`);
  return n;
}

export function requiredCell(v: string | undefined, column: string, range?: { min?: number; max?: number }): number {
  const n = cell(v, column, range);
  if (n === null) throw new RecordError(`${column} is missing`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// What every row shares

/** What a row needs of the export's devices (samsungDevices.ts reads them; a shape here, so the two files do not import each other). */
export type DeviceLookup = { of(uuid: string | undefined): { label: string | null; model: string | null; bodyWorn: boolean } };

export type RowCommon = { id: string; provenance: Provenance; pkg: string | null; deviceModel: string | null; metadata: Metadata };

export function rowCommon(values: Record<string, string | undefined>, dataType: string, provider: string, devices: DeviceLookup): RowCommon {
  const id = values.datauuid;
  if (!id) throw new RecordError('datauuid is missing');
  const pkg = values.pkg_name ?? null;
  const device = devices.of(values.deviceuuid);
  const offset = timeOffset(values.time_offset);
  return {
    id,
    pkg,
    deviceModel: device.model,
    provenance: { provider, source: vendorOf(pkg, provider), device: device.label, body_worn: device.bodyWorn },
    metadata: {
      data_type: dataType,
      datauuid: id,
      deviceuuid: values.deviceuuid ?? null,
      pkg_name: pkg,
      ...(offset ? { timezone: offset } : {}),
      create_time: values.create_time ?? null,
      update_time: values.update_time ?? null,
      ...(values.comment ? { comment: values.comment } : {}),
    },
  };
}

export function rowLocation(entry: ArchiveEntry, line: number): string {
  return `${entry.name}:${line}`;
}

export function rowExcerpt(values: Record<string, string | undefined>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)));
}
