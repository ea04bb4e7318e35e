import type { ParseContext, ParseItem, Provenance } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { csvTable, type CsvRecord } from '../exportShared/csvTable.js';
import { CLARITY_LIMITS } from '../exportShared/parserLimits.js';
import { uploaderOrUtc } from '../exportShared/exportClock.js';
import { rejectedItem, UnreadableExportError } from '../exportShared/unreadableExport.js';
import type { ByteSource, ImportDecoder } from '../importSource.js';
import { claritySniff, clarityHeader, COLUMN, columnName, PRIVATE_COLUMNS, type ClarityHeader } from './clarityColumns.js';
import { decodeEvent, RECORD_EVENTS, type EventContext, type Row } from './clarityEvents.js';

/**
 * dexcom-clarity (contracts §17): the CSV file Dexcom Clarity exports: a header row, rows
 * describing the patient, the devices and the alert settings, then one row per event. Read row by
 * row from the stored upload. Its local times carry no offset: they are read in the zone the
 * uploader names, else as UTC (`metadata.timezone_source`). The patient rows are skipped unread
 * and never reach a record, a rejection or a log. docs/formats/dexcom-clarity.md.
 */

export const DEXCOM_CLARITY_SLUG = 'dexcom-clarity';

export const dexcomClarityDecoder: ImportDecoder = {
  slug: DEXCOM_CLARITY_SLUG,
  sniff: claritySniff,
  decode: (source, ctx) => decodeClarity(source, ctx),
};

/** A device's name as Clarity's `Source Device ID` gives it (`iPhone G6`, `iOS D1G7`); a value that may be a serial number is not kept. */
function deviceModel(sourceDeviceId: string | undefined): string | null {
  if (!sourceDeviceId || !/^[A-Za-z][A-Za-z0-9+]* [A-Za-z0-9+ ]+$/.test(sourceDeviceId) || /\d{5,}/.test(sourceDeviceId)) return null;
  return sourceDeviceId.slice(0, 60);
}

/** A row without its private cells, for a rejection's excerpt. */
function excerptOf(row: Row): Row {
  return Object.fromEntries(Object.entries(row).filter(([k]) => !PRIVATE_COLUMNS.has(k)));
}

async function* decodeClarity(source: ByteSource, ctx: ParseContext): AsyncGenerator<ParseItem> {
  const clock = uploaderOrUtc(ctx);
  const p: Provenance = { provider: ctx.provider, source: 'dexcom', device: null, body_worn: true };
  // `Device` rows name the app or receiver (`Device Info`) behind each `Source Device ID`.
  const devices = new Map<string, string>();
  let header: ClarityHeader | null = null;
  // The rows are keyed by column name; the units stand in the header's cells as written.
  let headerCells: string[] = [];
  const names = (cells: string[]) => {
    headerCells = cells;
    return cells.map(columnName);
  };
  const input = source.read(0, source.size);
  try {
    for await (const item of csvTable(input, { names })) {
      if ('header' in item) {
        header = clarityHeader(headerCells);
        continue;
      }
      if ('skipped' in item) {
        // The raw line may be a patient row or hold a serial number: its place and reason only.
        yield rejectedItem(`line ${item.skipped.line}`, item.skipped.reason, '');
        continue;
      }
      if (!header) throw new UnreadableExportError('line 1', 'not a Dexcom Clarity export: it has no header row');
      yield* rowItems(item, header, clock, p, devices);
    }
  } finally {
    input.destroy();
  }
  if (!header) throw new UnreadableExportError('line 1', 'not a Dexcom Clarity export: the file has no header row');
}

function* rowItems(item: CsvRecord, header: ClarityHeader, clock: EventContext['clock'], p: Provenance, devices: Map<string, string>): Generator<ParseItem> {
  const row = item.values;
  const type = row[COLUMN.eventType];
  if (type === 'Device') {
    const id = row[COLUMN.sourceDeviceId];
    const info = row[COLUMN.deviceInfo];
    if (id && info && (devices.size < CLARITY_LIMITS.maxDevices || devices.has(id))) devices.set(id, info.slice(0, 100));
    return;
  }
  if (!type || !RECORD_EVENTS.has(type)) return;
  // A row cut short (the file ends inside it) would give a cut number: refused whole.
  const cells = Object.keys(row).length;
  if (cells < header.names.length) {
    yield rejectedItem(`line ${item.line}`, `the row has ${cells} of the header's ${header.names.length} columns (the file may be cut inside it)`, excerptOf(row));
    return;
  }
  const sourceId = row[COLUMN.sourceDeviceId];
  const model = deviceModel(sourceId);
  const name = (sourceId && devices.get(sourceId)) ?? null;
  const device = { name, model };
  const provenance = { ...p, device: name && model ? `${name} (${model})` : (name ?? model ?? 'Dexcom') };
  try {
    for (const record of decodeEvent(type, row, { p: provenance, clock, header, device })) yield { record };
  } catch (err) {
    if (!(err instanceof RecordError)) throw err;
    yield rejectedItem(`line ${item.line}`, err.message, excerptOf(row));
  }
}
