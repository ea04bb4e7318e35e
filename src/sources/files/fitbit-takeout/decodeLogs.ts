import type { NormalizedRecord, ParseItem, Provenance } from '../../../../commands/ingestion/records.js';
import { isObject, RecordError, type Json } from '../../shared/recordError.js';
import { decodeSleep } from '../../providers/fitbit/decodeSleep.js';
import { activityLogWorkout } from '../../providers/fitbit/decodeActivity.js';
import { readInstant } from '../../shared/providerTimes.js';
import { fitbitQuantity, num, requireNum, type ElementDecoder } from './fitbitRecords.js';
import { usDate, usDateTime, type TakeoutClock } from './takeoutClock.js';

/**
 * The log files of the JSON layout: weight logs, sleep logs (the Web API's v1.2 sleep objects,
 * decoded by the Fitbit connector's own sleep decoder) and exercise logs.
 */

type Ctx = { p: Provenance; clock: TakeoutClock };

// ---------------------------------------------------------------------------------------------
// Weight

const LB = 0.45359237;
/** Heights a body mass index can imply: 1.2 to 2.3 m. */
const H2_MIN = 1.2 ** 2;
const H2_MAX = 2.3 ** 2;

/**
 * `weight-*.json` says nothing of its unit, and both real exports in hand write pounds whatever
 * the account's country. Each log carries its BMI, which fixes the unit when the height is known:
 * weight / BMI is the height squared in kilograms, or 2.2 times it in pounds. With the export's
 * own height the closer reading wins; without it, the reading whose height is plausible; when
 * both are, pounds (what Fitbit writes), flagged in the metadata.
 */
export function weightUnit(weight: number, bmi: number | null, heightM: number | null): { unit: 'kg' | 'lb'; basis: string } {
  if (bmi === null || bmi <= 0) return { unit: 'lb', basis: 'assumed (no BMI in the log)' };
  const h2kg = weight / bmi;
  const h2lb = (weight * LB) / bmi;
  if (heightM !== null) return Math.abs(h2kg - heightM ** 2) <= Math.abs(h2lb - heightM ** 2) ? { unit: 'kg', basis: 'bmi_and_height' } : { unit: 'lb', basis: 'bmi_and_height' };
  const kgPlausible = h2kg >= H2_MIN && h2kg <= H2_MAX;
  const lbPlausible = h2lb >= H2_MIN && h2lb <= H2_MAX;
  if (kgPlausible && !lbPlausible) return { unit: 'kg', basis: 'bmi' };
  if (lbPlausible && !kgPlausible) return { unit: 'lb', basis: 'bmi' };
  return { unit: 'lb', basis: 'assumed (BMI fits both units)' };
}

export function weightDecoder({ p, clock }: Ctx, heightM: () => number | null): ElementDecoder {
  return (log) => {
    const id = log.logId;
    if (typeof id !== 'number' && typeof id !== 'string') throw new RecordError('logId is missing');
    const date = usDate(log.date, 'date');
    const time = typeof log.time === 'string' && /^\d{2}:\d{2}:\d{2}$/.test(log.time) ? log.time : '00:00:00';
    const at = clock.local(usDateTime(`${log.date as string} ${time}`, 'time'));
    const weight = requireNum(log.weight, 'weight');
    if (weight <= 0) throw new RecordError(`weight ${weight} is not a weight`);
    const bmi = num(log.bmi, 'bmi');
    const { unit, basis } = weightUnit(weight, bmi, heightM());
    const source = typeof log.source === 'string' ? log.source : null;
    const scale = source !== null && /^aria/i.test(source);
    const worn = { ...p, device: scale ? source : null, body_worn: false };
    const metadata = { ...clock.metadata(at), date, log_id: id, log_source: source, weight_unit: unit, weight_unit_basis: basis };
    const out: NormalizedRecord[] = [fitbitQuantity(worn, { id: `body_mass:${id}`, type: 'body_mass', value: unit === 'kg' ? weight : Number((weight * LB).toPrecision(12)), unit: 'kg', start: at, end: at, metadata: { ...metadata, original_weight: weight }, manual: !scale })];
    if (bmi !== null && bmi > 0) out.push(fitbitQuantity(worn, { id: `body_mass_index:${id}`, type: 'body_mass_index', value: bmi, unit: 'count', start: at, end: at, metadata, manual: !scale }));
    const fat = num(log.fat, 'fat');
    if (fat !== null && fat > 0) {
      if (fat >= 100) throw new RecordError(`fat ${fat} % is not a percentage`);
      out.push(fitbitQuantity(worn, { id: `body_fat_percentage:${id}`, type: 'body_fat_percentage', value: Math.round(fat * 1000) / 1000, unit: '%', start: at, end: at, metadata, manual: !scale }));
    }
    return out;
  };
}

// ---------------------------------------------------------------------------------------------
// Sleep

export type SleepScore = { overall: number | null };

/** A sleep log through the Fitbit connector's decoder, with the provider and the night's score set. */
export function sleepDecoder({ p, clock }: Ctx, scores: ReadonlyMap<string, SleepScore>): (log: Json, location: string) => ParseItem[] {
  return (log, location) =>
    decodeSleep({ sleep: [log] }, clock.zone).map((item) => {
      if ('rejected' in item) return { rejected: { ...item.rejected, location } };
      const record = item.record;
      if (record.kind !== 'sleep_session') return item;
      const score = scores.get(String(log.logId));
      return {
        record: {
          ...record,
          provider: p.provider,
          sleep_score: score?.overall ?? null,
          metadata: { ...record.metadata, timezone_source: clock.source, is_main_sleep: record.metadata.is_main_sleep ?? log.mainSleep ?? null },
        },
      };
    });
}

// ---------------------------------------------------------------------------------------------
// Exercise

/**
 * `exercise-N.json`: activity logs as the Web API's activity log list, except `startTime`, which
 * is `MM/DD/YY HH:MM:SS` in UTC here (an ISO time with its offset is read as well), so the
 * connector's reading serves with this file's clock.
 */
export function exerciseDecoder({ p, clock }: Ctx): ElementDecoder {
  return (a) => [
    activityLogWorkout(a, {
      provenance: { provider: p.provider, source: p.source },
      readStart: (startTime) => ({
        ms: typeof startTime === 'string' && /[T ]\d{2}:\d{2}.*([+-]\d{2}:?\d{2}|Z)$/.test(startTime) ? readInstant(startTime, 'startTime').ms : clock.utc(usDateTime(startTime, 'startTime')),
      }),
      // SmartTrack's auto-detected logs come from the tracker too, though they name no source.
      trackerLogTypes: ['tracker', 'auto_detected'],
      timeMetadata: (start) => clock.metadata(start.ms),
      extraMetadata: (log) => ({ active_zone_minutes: isObject(log.activeZoneMinutes) ? num(log.activeZoneMinutes.totalMinutes, 'activeZoneMinutes.totalMinutes') : null }),
    }),
  ];
}
