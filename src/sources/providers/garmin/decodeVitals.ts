import type { ParseItem } from '../../../../commands/ingestion/records.js';
import { calendarDate, epochSeconds, iso, offsetMap, optionalNumber, requiredNumber, SummaryError, zoneMetadata, zoneOffset, type Summary } from './fields.js';
import { part, type DecodeContext } from './decodeContext.js';
import { provenance, quantity } from './garminRecords.js';

/**
 * `hrv`: the overnight heart-rate variability Garmin measures during sleep. Garmin's HRV is RMSSD
 * (not SDNN) → `hrv_rmssd`: the night's average (`lastNightAvg`) over the summary's period, keyed
 * by the calendar date. The 5-minute values of `hrvValues` stay in metadata: stored as samples of
 * the same type they would outweigh the nightly value in every average.
 */
export function decodeHrv(s: Summary, ctx: DecodeContext): ParseItem[] {
  const date = calendarDate(s);
  const start = epochSeconds(s, 'startTimeInSeconds');
  const duration = requiredNumber(s, 'durationInSeconds');
  const zone = zoneOffset(s);
  const avg = optionalNumber(s, 'lastNightAvg');
  if (avg === null) return [];
  const values = offsetMap(s, 'hrvValues');
  const meta = {
    summaryId: s.summaryId,
    calendarDate: date,
    lastNight5MinHigh: s.lastNight5MinHigh ?? null,
    hrv_values: Object.fromEntries(values.map((v) => [iso(start + v.offset), v.value])),
    ...zoneMetadata(zone),
  };
  return part(ctx, 'lastNightAvg', avg, () =>
    quantity(provenance(ctx.provider, true), `hrv:${date}`, { type: 'hrv_rmssd', value: avg, unit: 'ms', range: [1, 300] }, iso(start), iso(start + duration), meta),
  );
}

/**
 * Time-offset maps of single readings, one record per reading keyed by its instant (Garmin's
 * summaries of the same kind overlap: the instant, not the summary, names a reading).
 */
function readings(s: Summary, ctx: DecodeContext, field: string, key: string, spec: { type: string; unit: string; range: readonly [number, number] }, extra: Record<string, unknown>): ParseItem[] {
  const start = epochSeconds(s, 'startTimeInSeconds');
  const zone = zoneOffset(s);
  const p = provenance(ctx.provider, true);
  const meta = { summaryId: s.summaryId, ...extra, ...zoneMetadata(zone) };
  const out: ParseItem[] = [];
  for (const { offset, value } of offsetMap(s, field)) {
    const at = iso(start + offset);
    out.push(...part(ctx, `${field}[${offset}]`, value, () => quantity(p, `${key}:${at}`, { ...spec, value }, at, at, meta)));
  }
  return out;
}

/** `pulseox`: blood-oxygen readings (all day, during sleep, or on demand) → oxygen_saturation. */
export function decodePulseOx(s: Summary, ctx: DecodeContext): ParseItem[] {
  return readings(s, ctx, 'timeOffsetSpo2Values', 'spo2', { type: 'oxygen_saturation', unit: '%', range: [50, 100] }, { onDemand: s.onDemand === true });
}

/** `respiration`: breaths per minute through the day and night → respiratory_rate. */
export function decodeRespiration(s: Summary, ctx: DecodeContext): ParseItem[] {
  return readings(s, ctx, 'timeOffsetEpochToBreaths', 'respiration', { type: 'respiratory_rate', unit: '/min', range: [1, 60] }, {});
}

/**
 * `stressDetails`: Garmin's stress score (0–100, negative codes for "no reading") and Body Battery
 * every few minutes. The catalog has no type for either (they are Garmin's own scores, not
 * measurements), so nothing is normalised: the payload stays in the raw store, and the check
 * below only refuses a summary that is not one.
 */
export function decodeStressDetails(s: Summary, _ctx: DecodeContext): ParseItem[] {
  epochSeconds(s, 'startTimeInSeconds');
  offsetMap(s, 'timeOffsetStressLevelValues');
  offsetMap(s, 'timeOffsetBodyBatteryValues');
  if (s.calendarDate !== undefined) calendarDate(s);
  if (typeof s.summaryId !== 'string') throw new SummaryError('summaryId is missing');
  return [];
}
