import type Database from 'better-sqlite3';
import type { Metadata, ParseItem, Provenance, QuantityRecord } from '../../../../commands/ingestion/records.js';
import { provenance, type DeviceInfo } from './devices.js';
import { HR_MAX, HR_MIN, HR_NO_READING, HR_UNIT, MAX_STEPS_PER_SAMPLE, MIN_EPOCH_S, SAMPLE_SECONDS, STEP_UNIT } from './limits.js';
import { addNightHeartRate, addSleepMinute, pushNight, type DeviceState, type SessionOut } from './sleepNights.js';
import { q, type Row, type TableInfo } from './sqliteExport.js';
import { rejectRow } from './rejectedRows.js';
import { intOrNull, isInt, isoOf, isoOrRaw } from './values.js';
import { HUAMI, sleepSchemeFor } from './vocabulary.js';

/**
 * `*ACTIVITY_SAMPLE` tables, one row per minute: steps and heart rate samples, and the sleep
 * minutes that make the nights where the table's raw kinds are known.
 */

export function* readSampleTable(
  db: Database.Database,
  table: TableInfo,
  deviceOf: (id: number) => DeviceInfo,
  provider: string,
  nights: SessionOut[],
  maxTs: number,
): Generator<ParseItem> {
  const optional = ['USER_ID', 'RAW_INTENSITY', 'RAW_KIND', 'HEART_RATE', 'SLEEP', 'DEEP_SLEEP', 'REM_SLEEP'].filter((c) => table.columns.has(c));
  const extraKey = table.pk.filter((c) => c !== 'TIMESTAMP' && c !== 'DEVICE_ID');
  const columns = [...new Set(['TIMESTAMP', 'DEVICE_ID', 'STEPS', ...optional, ...extraKey])];
  const rowid = table.withoutRowid ? '' : 'rowid AS "__rowid", ';
  // The primary key order: no sort of a large table; devices keep separate state.
  const stmt = db.prepare(`SELECT ${rowid}${columns.map(q).join(', ')} FROM ${q(table.name)} ORDER BY "TIMESTAMP", "DEVICE_ID"`);
  const states = new Map<number, DeviceState>();

  for (const row of stmt.iterate() as IterableIterator<Row>) {
    const reason = invalidSample(row, maxTs);
    if (reason) {
      yield { rejected: rejectRow(table, row, reason) };
      continue;
    }
    const ts = row.TIMESTAMP as number;
    const deviceId = row.DEVICE_ID as number;
    const steps = row.STEPS as number;
    const hr = intOrNull(row.HEART_RATE);
    const hasHr = hr !== null && !HR_NO_READING.has(hr);
    const device = deviceOf(deviceId);
    const prov = provenance(device, provider);
    const key = `${table.name}:${device.identifier}:${ts}${extraKey.map((c) => `:${String(row[c])}`).join('')}`;

    if (steps > 0) {
      yield { record: quantity(prov, device, `${key}:step_count`, 'step_count', steps, STEP_UNIT, ts, ts + SAMPLE_SECONDS, sampleMetadata(table, row, steps, 'steps')) };
    }
    if (hasHr) {
      yield { record: quantity(prov, device, `${key}:heart_rate`, 'heart_rate', hr, HR_UNIT, ts, ts, sampleMetadata(table, row, hr, 'bpm')) };
    }

    const scheme = sleepSchemeFor(table.name, device);
    if (!scheme) continue;
    let state = states.get(deviceId);
    if (!state) states.set(deviceId, (state = { kind: { last: HUAMI.UNSET }, night: null }));
    const stage = scheme.classify(row, state.kind);
    if (stage) {
      const finished = addSleepMinute(state, ts, stage);
      if (finished) pushNight(nights, finished, table, scheme, device, provider);
      if (hasHr && stage !== 'awake' && state.night) addNightHeartRate(state.night, hr);
    }
  }
  for (const [deviceId, state] of states) {
    if (state.night) pushNight(nights, state.night, table, sleepSchemeFor(table.name, deviceOf(deviceId))!, deviceOf(deviceId), provider);
  }
}

function invalidSample(row: Row, maxTs: number): string | null {
  const ts = row.TIMESTAMP;
  if (!isInt(ts)) return `TIMESTAMP ${JSON.stringify(ts)} is not an integer`;
  if (ts < MIN_EPOCH_S || ts > maxTs) return `TIMESTAMP ${ts} (${isoOrRaw(ts)}) is outside ${isoOf(MIN_EPOCH_S)} .. one day after the upload`;
  if (!isInt(row.DEVICE_ID)) return `DEVICE_ID ${JSON.stringify(row.DEVICE_ID)} is not an integer`;
  const steps = row.STEPS;
  if (!isInt(steps)) return `STEPS ${JSON.stringify(steps)} is not an integer`;
  if (steps < 0) return `STEPS ${steps} is negative`;
  if (steps > MAX_STEPS_PER_SAMPLE) return `STEPS ${steps} in one minute is implausible (more than ${MAX_STEPS_PER_SAMPLE})`;
  if ('HEART_RATE' in row && row.HEART_RATE !== null) {
    const hr = row.HEART_RATE;
    if (!isInt(hr)) return `HEART_RATE ${JSON.stringify(hr)} is not an integer`;
    if (!HR_NO_READING.has(hr) && (hr < HR_MIN || hr > HR_MAX)) return `HEART_RATE ${hr} is out of range (${HR_MIN}..${HR_MAX}; -1, 0 and 255 mean no reading)`;
  }
  return null;
}

function sampleMetadata(table: TableInfo, row: Row, value: number, unit: string): Metadata {
  const metadata: Metadata = {
    timezone: null,
    table: table.name,
    raw_kind: intOrNull(row.RAW_KIND),
    raw_intensity: intOrNull(row.RAW_INTENSITY),
    gadgetbridge_device_id: row.DEVICE_ID,
    gadgetbridge_user_id: intOrNull(row.USER_ID),
    original_value: value,
    original_unit: unit,
  };
  for (const c of ['SLEEP', 'DEEP_SLEEP', 'REM_SLEEP'] as const) {
    if (c in row) metadata[c.toLowerCase()] = intOrNull(row[c]);
  }
  return metadata;
}

function quantity(prov: Provenance, device: DeviceInfo, externalId: string, type: string, value: number, unit: string, start: number, end: number, metadata: Metadata): QuantityRecord {
  return {
    ...prov,
    kind: 'quantity',
    external_id: externalId,
    type,
    value,
    unit,
    start_date: isoOf(start),
    end_date: isoOf(end),
    source_name: 'Gadgetbridge',
    source_bundle_id: null,
    device_model: device.model ?? device.name,
    product_type: device.typeName,
    was_user_entered: false,
    metadata,
  };
}
