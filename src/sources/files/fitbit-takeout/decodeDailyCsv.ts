import type { Provenance } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { cellNumber, fitbitQuantity, type RowDecoder } from './fitbitRecords.js';
import { isoWallTime } from '../exportShared/exportClock.js';
import { dateOf, type TakeoutClock } from './takeoutClock.js';
import type { FileKind } from './takeoutLayout.js';

/**
 * The CSV files of the newer layout. The daily ones name a local day (their `timestamp` is the
 * day's midnight, with or without a `Z` that does not mean UTC) and become a sample over that
 * day, as the Fitbit connector stores the same figures; `sleep_score.csv` names the sleep log it
 * scores and its wake time (local, despite the `Z`), `Computed Temperature` a night's local span.
 */

type Ctx = { p: Provenance; clock: TakeoutClock };

type DailySpec = { type: string; unit: string; date: string; value: string; min?: number; max?: number; extra?: readonly string[] };

const DAILY: Partial<Record<FileKind, DailySpec>> = {
  hrv_daily: { type: 'hrv_rmssd', unit: 'ms', date: 'timestamp', value: 'rmssd', extra: ['nremhr', 'entropy'] },
  respiratory_rate_daily: { type: 'respiratory_rate', unit: 'count/min', date: 'timestamp', value: 'daily_respiratory_rate' },
  spo2_daily: { type: 'oxygen_saturation', unit: '%', date: 'timestamp', value: 'average_value', max: 100, extra: ['lower_bound', 'upper_bound'] },
  readiness_daily: { type: 'readiness_score', unit: 'count', date: 'date', value: 'readiness_score_value', max: 100, extra: ['readiness_state', 'activity_subcomponent', 'sleep_subcomponent', 'hrv_subcomponent'] },
};

export function dailyCsvColumns(kind: FileKind): readonly string[] | null {
  const spec = DAILY[kind];
  if (spec) return [spec.date, spec.value];
  if (kind === 'computed_temperature') return ['sleep_start', 'sleep_end', 'nightly_temperature'];
  if (kind === 'sleep_score') return ['sleep_log_entry_id', 'timestamp', 'overall_score'];
  return null;
}

export function dailyCsvDecoder(kind: FileKind, { p, clock }: Ctx): RowDecoder | null {
  const spec = DAILY[kind];
  if (spec) {
    return (row) => {
      const date = dateOf(isoWallTime(row[spec.date], spec.date));
      const value = cellNumber(row[spec.value], spec.value);
      if (value === null || value === 0) return [];
      if (value < 0 || (spec.max !== undefined && value > spec.max)) throw new RecordError(`${spec.value} ${value} is out of range`);
      const { start, end } = clock.day(date);
      const extra: Record<string, unknown> = {};
      for (const c of spec.extra ?? []) extra[c] = row[c] === undefined || row[c] === '' ? null : /^-?[\d.]+(E-?\d+)?$/i.test(row[c]!) ? Number(row[c]) : row[c];
      return [fitbitQuantity(p, { id: `${spec.type}:${date}`, type: spec.type, value, unit: spec.unit, start, end, metadata: { ...clock.metadata(start), date, ...extra } })];
    };
  }
  if (kind === 'sleep_score') {
    return (row) => {
      const id = row.sleep_log_entry_id;
      if (!id || !/^\d+$/.test(id)) throw new RecordError(`sleep_log_entry_id ${JSON.stringify(id)} is not a log id`);
      const score = cellNumber(row.overall_score, 'overall_score');
      if (score === null || score === 0) return [];
      if (score < 0 || score > 100) throw new RecordError(`overall_score ${score} is out of range`);
      const wake = clock.local(isoWallTime(row.timestamp, 'timestamp'));
      const parts: Record<string, number | null> = {};
      for (const c of ['composition_score', 'revitalization_score', 'duration_score', 'deep_sleep_in_minutes', 'resting_heart_rate', 'restlessness']) parts[c] = cellNumber(row[c], c);
      return [fitbitQuantity(p, { id: `sleep_score:${id}`, type: 'sleep_score', value: score, unit: 'count', start: wake, end: wake, metadata: { ...clock.metadata(wake), sleep_log_id: id, ...parts } })];
    };
  }
  if (kind === 'computed_temperature') {
    return (row) => {
      const start = clock.local(isoWallTime(row.sleep_start, 'sleep_start'));
      const end = clock.local(isoWallTime(row.sleep_end, 'sleep_end'));
      if (end <= start) throw new RecordError('sleep_end is not after sleep_start');
      const celsius = cellNumber(row.nightly_temperature === 'NaN' ? '' : row.nightly_temperature, 'nightly_temperature');
      if (celsius === null) return [];
      if (celsius < 20 || celsius > 45) throw new RecordError(`nightly_temperature ${celsius} °C is not a skin temperature`);
      return [
        fitbitQuantity(p, {
          id: `sleeping_wrist_temperature:${new Date(start).toISOString()}`,
          type: 'sleeping_wrist_temperature',
          value: celsius,
          unit: 'degC',
          start,
          end,
          metadata: { ...clock.metadata(start), measurement: row.type ?? null, temperature_samples: cellNumber(row.temperature_samples, 'temperature_samples') },
        }),
      ];
    };
  }
  return null;
}
