import { UnreadableExportError } from '../exportShared/unreadableExport.js';

/**
 * The columns of a Dexcom Clarity CSV export, by the name before their parenthesis: Clarity writes
 * the format or the unit there (`Timestamp (YYYY-MM-DDThh:mm:ss)`, `Glucose Value (mg/dL)` or
 * `(mmol/L)`), so the glucose unit of the whole file is read from its header.
 * docs/formats/dexcom-clarity.md.
 */

export const COLUMN = {
  timestamp: 'Timestamp',
  eventType: 'Event Type',
  eventSubtype: 'Event Subtype',
  deviceInfo: 'Device Info',
  sourceDeviceId: 'Source Device ID',
  glucose: 'Glucose Value',
  insulin: 'Insulin Value',
  carbs: 'Carb Value',
  duration: 'Duration',
  rateOfChange: 'Glucose Rate of Change',
  transmitterTime: 'Transmitter Time',
} as const;

/**
 * Columns never read into a record or a rejection's excerpt: the patient's name, identifier and
 * birth date stand in `Patient Info`, a transmitter's serial number in `Transmitter ID`.
 */
export const PRIVATE_COLUMNS: ReadonlySet<string> = new Set(['Patient Info', 'Transmitter ID']);

const REQUIRED = [COLUMN.timestamp, COLUMN.eventType, COLUMN.glucose] as const;

/** The glucose units Clarity writes, as UCUM. */
const GLUCOSE_UNITS: Readonly<Record<string, string>> = { 'mg/dL': 'mg/dL', 'mmol/L': 'mmol/L' };

export type ClarityHeader = { names: string[]; glucoseUcum: string; rateUnit: string | null };

/** A header cell's column name: the words before its parenthesis. */
export const columnName = (cell: string) => cell.replace(/\s*\(.*\)\s*$/, '');
const unitOf = (cell: string) => /\(([^)]*)\)\s*$/.exec(cell)?.[1] ?? null;

/** Reads the header row; an export without the columns its events need cannot be read (the upload fails). */
export function clarityHeader(cells: readonly string[]): ClarityHeader {
  const names = cells.map(columnName);
  const missing = REQUIRED.filter((c) => !names.includes(c));
  if (missing.length) {
    throw new UnreadableExportError('line 1', `not a Dexcom Clarity export: its header row lacks ${missing.join(', ')}; it has ${names.slice(0, 20).join(', ').slice(0, 400)}`);
  }
  const glucoseCell = cells[names.indexOf(COLUMN.glucose)]!;
  const glucoseUcum = GLUCOSE_UNITS[unitOf(glucoseCell) ?? ''];
  if (!glucoseUcum) throw new UnreadableExportError('line 1', `the glucose column ${JSON.stringify(glucoseCell.slice(0, 60))} names no unit this import reads (mg/dL or mmol/L)`);
  const rateCell = cells[names.indexOf(COLUMN.rateOfChange)];
  return { names, glucoseUcum, rateUnit: rateCell ? unitOf(rateCell) : null };
}

/**
 * Why the first bytes of an upload cannot be a Clarity export, or null: its first line is the
 * header row, naming the timestamp, event type and glucose columns (quoted or not, after an
 * optional byte order mark). Judged at the request (422) and by the CLI's format detection.
 */
export function claritySniff(head: Buffer): string | null {
  const text = head.subarray(0, 64 * 1024).toString('utf8').replace(/^\uFEFF/, '');
  const firstLine = text.split(/\r?\n/, 1)[0] ?? '';
  const wanted = ['Timestamp (', 'Event Type', 'Glucose Value ('];
  const lacking = wanted.filter((w) => !firstLine.includes(w));
  if (lacking.length === 0) return null;
  return `its first line is not the header row of a Dexcom Clarity CSV export (Index, Timestamp (YYYY-MM-DDThh:mm:ss), Event Type, …, Glucose Value (mg/dL), …): it lacks ${lacking.map((w) => JSON.stringify(w.replace(' (', ''))).join(', ')}`;
}
