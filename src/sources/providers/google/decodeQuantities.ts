import type { NormalizedRecord, Provenance } from '../../../../commands/ingestion/records.js';
import { quantity, RecordError, type Json } from '../../shared/connectorRecords.js';
import { isObject } from '../../shared/recordError.js';
import { readCivilDate, readInterval, readNumber, readSampleTime } from './googleTimes.js';

/**
 * The Google Health data points that are one quantity each: what member holds the value, the
 * catalog type it becomes and the unit it is sent in. Samples are at their `sampleTime`, interval
 * totals over their `interval`, daily values over the user's local day.
 */
type QuantityOf = { type: string; field: string; unit: string; range?: [number, number] };

export const GOOGLE_QUANTITIES: Readonly<Record<string, QuantityOf>> = {
  heartRate: { type: 'heart_rate', field: 'beatsPerMinute', unit: 'count/min', range: [20, 250] },
  steps: { type: 'step_count', field: 'count', unit: 'count', range: [0, 100_000] },
  distance: { type: 'distance', field: 'millimeters', unit: 'mm' },
  activeEnergyBurned: { type: 'active_energy_burned', field: 'kilocalories', unit: 'kcal' },
  weight: { type: 'body_mass', field: 'weightGrams', unit: 'g', range: [500, 650_000] },
  bodyFat: { type: 'body_fat_percentage', field: 'percentage', unit: '%', range: [1, 80] },
  oxygenSaturation: { type: 'oxygen_saturation', field: 'percentage', unit: '%', range: [50, 100] },
  heartRateVariability: { type: 'hrv_rmssd', field: 'rootMeanSquareOfSuccessiveDifferencesMilliseconds', unit: 'ms', range: [1, 500] },
  dailyRestingHeartRate: { type: 'resting_heart_rate', field: 'beatsPerMinute', unit: 'count/min', range: [20, 250] },
  dailyRespiratoryRate: { type: 'respiratory_rate', field: 'breathsPerMinute', unit: 'count/min', range: [2, 80] },
  vo2Max: { type: 'vo2_max', field: 'vo2Max', unit: 'mL/(kg.min)', range: [5, 100] },
};

/** Form factors worn on the body: their points are body-worn, a phone's or a scale's are not. */
const WORN = new Set(['WATCH', 'BAND', 'TRACKER', 'RING', 'FITNESS_BAND']);

/**
 * Where the data point came from, as the records' provenance: Fitbit-platform devices (Fitbit
 * trackers, Pixel Watch) are source `fitbit`, anything else Google Health reports `google`, so the
 * merged view ranks them as it ranks those sources from any provider; the device's name, and
 * body-worn from its form factor. The whole `dataSource` stays in metadata.
 */
export function sourceOf(point: Json, p: Provenance): { provenance: Provenance; metadata: Record<string, unknown> } {
  const ds = isObject(point.dataSource) ? point.dataSource : {};
  const device = isObject(ds.device) ? ds.device : {};
  const name = typeof device.displayName === 'string' ? device.displayName.slice(0, 128) : null;
  const form = typeof device.formFactor === 'string' ? device.formFactor : null;
  const provenance: Provenance = {
    ...p,
    source: ds.platform === 'FITBIT' ? 'fitbit' : 'google',
    device: name ?? p.device,
    body_worn: form === null ? p.body_worn : WORN.has(form),
  };
  return { provenance, metadata: { data_source: ds } };
}

export function decodeQuantity(member: string, point: Json, p: Provenance): NormalizedRecord[] {
  const spec = GOOGLE_QUANTITIES[member];
  const body = point[member];
  if (!spec || !isObject(body)) throw new RecordError(`no ${member} in the data point`);
  const name = typeof point.name === 'string' ? point.name : null;
  if (!name) throw new RecordError('name is missing');
  const value = readNumber(body[spec.field], `${member}.${spec.field}`);
  if (spec.range && (value < spec.range[0] || value > spec.range[1])) throw new RecordError(`${member}.${spec.field} ${value} is outside ${spec.range[0]}..${spec.range[1]}`);
  const source = sourceOf(point, p);
  const provenance = source.provenance;
  let start: number;
  let end: number;
  let zone: Record<string, string>;
  if (isObject(body.sampleTime)) {
    const at = readSampleTime(body.sampleTime);
    [start, end, zone] = [at.ms, at.ms, { timezone: at.offset }];
  } else if (isObject(body.interval)) {
    const i = readInterval(body.interval);
    [start, end, zone] = [i.start.ms, i.end.ms, { timezone: i.start.offset, ...(i.end.offset !== i.start.offset ? { end_timezone: i.end.offset } : {}) }];
  } else if (body.date !== undefined) {
    // A daily value covers the user's local day, whose offset is not sent: it is placed on the
    // day's UTC bounds and the civil date kept (docs/connectors/google.md).
    const day = readCivilDate(body.date);
    start = Date.parse(`${day}T00:00:00Z`);
    end = start + 86_400_000;
    zone = { date: day };
  } else throw new RecordError(`${member} has no sampleTime, interval or date`);
  return [quantity(provenance, { external_id: name, type: spec.type, value, unit: spec.unit, start, end, metadata: { ...source.metadata, ...zone } })];
}
