import type { Metadata, NormalizedRecord, Provenance } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { catalogQuantity } from '../exportShared/catalogRecords.js';
import { isoWallTime, type ExportClock } from '../exportShared/exportClock.js';
import type { WallTime } from '../exportShared/localClock.js';
import { COLUMN, type ClarityHeader } from './clarityColumns.js';

/**
 * One event row of a Clarity export → its records (docs/formats/dexcom-clarity.md). EGVs and
 * calibrations are `blood_glucose`, carbs `dietary_carbohydrates`, insulin `insulin_delivery`;
 * the other event types (exercise, health, notes, alerts, device and patient rows) have no home in
 * the catalog and decode to nothing: they stay in the stored upload as sent.
 */

export type Row = Record<string, string | undefined>;

/** The event types this import turns into records. */
export const RECORD_EVENTS: ReadonlySet<string> = new Set(['EGV', 'Calibration', 'Carbs', 'Insulin']);

/** Clarity writes these for an EGV off the sensor's scale (below 40 mg/dL, above 400 mg/dL on G6 and G7). */
const OFF_SCALE: Readonly<Record<string, string>> = {
  Low: "below the sensor's reporting range (under 40 mg/dL, 2.2 mmol/L)",
  High: "above the sensor's reporting range (over 400 mg/dL, 22.2 mmol/L)",
};

export type EventContext = { p: Provenance; clock: ExportClock; header: ClarityHeader; device: { name: string | null; model: string | null } };

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

function numberIn(row: Row, column: string, what: string): number {
  const v = row[column];
  if (v === undefined) throw new RecordError(`${what} has no ${column}`);
  if (!NUMBER.test(v)) {
    const off = OFF_SCALE[v];
    if (off) throw new RecordError(`${what} ${JSON.stringify(v)}: ${off}; no number was measured, so none is stored`);
    throw new RecordError(`${what} ${column} ${JSON.stringify(v.slice(0, 40))} is not a number`);
  }
  const n = Number(v);
  if (!(n > 0)) throw new RecordError(`${what} ${column} ${n} is not above 0`);
  return n;
}

/** An id that does not depend on the zone the times are read in: a later import in another zone updates the records. */
function wallId(t: WallTime): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${t.y}-${p(t.mo)}-${p(t.d)}T${p(t.h)}:${p(t.mi)}:${p(t.s)}`;
}

function optionalNumber(v: string | undefined): number | null {
  return v !== undefined && NUMBER.test(v) ? Number(v) : null;
}

export function decodeEvent(type: string, row: Row, c: EventContext): NormalizedRecord[] {
  const wall = isoWallTime(row[COLUMN.timestamp], COLUMN.timestamp);
  const at = c.clock.local(wall);
  const subtype = row[COLUMN.eventSubtype] ?? null;
  const metadata: Metadata = { ...c.clock.metadata(at), event_type: type, ...(subtype ? { event_subtype: subtype } : {}) };
  const sample = (userEntered: boolean) => ({ source_name: c.device.name, source_bundle_id: null, device_model: c.device.model, product_type: null, was_user_entered: userEntered });
  const p = { ...c.p, body_worn: type === 'EGV' };
  const one = (kind: string, q: { type: string; value: number; ucum: string; metadata: Metadata; userEntered: boolean }) =>
    catalogQuantity(p, sample(q.userEntered), { external_id: `${kind}:${wallId(wall)}`, type: q.type, stored: { value: q.value, ucum: q.ucum }, start: at, end: at, metadata: q.metadata });

  switch (type) {
    case 'EGV': {
      const value = numberIn(row, COLUMN.glucose, 'EGV');
      const transmitterTime = optionalNumber(row[COLUMN.transmitterTime]);
      const rate = optionalNumber(row[COLUMN.rateOfChange]);
      const extra: Metadata = {
        record_type: 'egv',
        ...(transmitterTime !== null ? { transmitter_time: transmitterTime } : {}),
        ...(rate !== null ? { rate_of_change: rate, rate_of_change_unit: c.header.rateUnit } : {}),
      };
      // A transmitter's counter tells apart two readings at the same wall time (the hour a clock falls back repeats).
      const record = one('egv', { type: 'blood_glucose', value, ucum: c.header.glucoseUcum, metadata: { ...metadata, ...extra }, userEntered: false });
      return [transmitterTime !== null ? { ...record, external_id: `${record.external_id}:${transmitterTime}` } : record];
    }
    case 'Calibration':
      return [one('calibration', { type: 'blood_glucose', value: numberIn(row, COLUMN.glucose, 'Calibration'), ucum: c.header.glucoseUcum, metadata: { ...metadata, record_type: 'calibration' }, userEntered: true })];
    case 'Carbs':
      return [one('carbs', { type: 'dietary_carbohydrates', value: numberIn(row, COLUMN.carbs, 'Carbs'), ucum: 'g', metadata, userEntered: true })];
    case 'Insulin':
      // The subtype (Fast-Acting, Long-Acting) stays as `event_subtype`.
      return [one(`insulin:${subtype ?? ''}`, { type: 'insulin_delivery', value: numberIn(row, COLUMN.insulin, 'Insulin'), ucum: '[iU]', metadata, userEntered: true })];
    default:
      return [];
  }
}
