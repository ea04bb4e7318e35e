import type { DailySummaryRecord, ParseItem } from '../../../../commands/ingestion/records.js';
import { calendarDate, epochSeconds, iso, offsetMap, optionalNumber, optionalString, requiredNumber, summaryMetadata, zoneMetadata, zoneOffset, type Summary } from './fields.js';
import { part, record, type DecodeContext } from './decodeContext.js';
import { provenance, quantity } from './garminRecords.js';

/**
 * `dailies`: one summary per local day (Garmin re-sends it, same day, with growing totals while
 * the day goes on). → one daily summary (keyed by the calendar date, so every re-send updates it),
 * the resting heart rate of the day, and the heart-rate samples of `timeOffsetHeartRateSamples`
 * (keyed by their instant). Steps, energy and distance as samples come from the epochs, not from
 * here: the day's totals would count them twice.
 */
export function decodeDaily(s: Summary, ctx: DecodeContext): ParseItem[] {
  const start = epochSeconds(s, 'startTimeInSeconds');
  const duration = requiredNumber(s, 'durationInSeconds');
  const date = calendarDate(s);
  const zone = zoneOffset(s);
  const p = provenance(ctx.provider, true);
  const meta = { ...summaryMetadata(s, ['timeOffsetHeartRateSamples']), ...zoneMetadata(zone) };
  const restingHr = optionalNumber(s, 'restingHeartRateInBeatsPerMinute');
  const daily: DailySummaryRecord = {
    kind: 'daily_summary',
    ...p,
    external_id: `dailies:${date}`,
    date,
    steps: optionalNumber(s, 'steps'),
    active_energy_kcal: optionalNumber(s, 'activeKilocalories'),
    distance_m: optionalNumber(s, 'distanceInMeters'),
    resting_heart_rate: restingHr,
    avg_heart_rate: optionalNumber(s, 'averageHeartRateInBeatsPerMinute'),
    sleep_seconds: null,
    metadata: meta,
  };
  const out: ParseItem[] = [record(daily)];
  const dayStart = iso(start);
  const dayEnd = iso(start + duration);
  if (restingHr !== null) {
    out.push(...part(ctx, 'restingHeartRateInBeatsPerMinute', restingHr, () =>
      quantity(p, `dailies:${date}:resting_heart_rate`, { type: 'resting_heart_rate', value: restingHr, unit: '/min', range: [20, 200] }, dayStart, dayEnd, { summaryId: s.summaryId, calendarDate: date, ...zoneMetadata(zone) }),
    ));
  }
  const hrMeta = { summaryId: s.summaryId, ...zoneMetadata(zone) };
  for (const { offset, value } of offsetMap(s, 'timeOffsetHeartRateSamples')) {
    const at = iso(start + offset);
    out.push(...part(ctx, `timeOffsetHeartRateSamples[${offset}]`, value, () =>
      quantity(p, `hr:${at}`, { type: 'heart_rate', value, unit: '/min', range: [25, 250] }, at, at, hrMeta),
    ));
  }
  return out;
}

/**
 * `epochs`: 15-minute slices of the day, one per activity type the device saw in the slice
 * (SEDENTARY, WALKING, RUNNING…). → steps, active energy and distance over the slice, keyed by
 * summaryId (each slice and activity type has its own).
 */
export function decodeEpoch(s: Summary, ctx: DecodeContext): ParseItem[] {
  const start = epochSeconds(s, 'startTimeInSeconds');
  const duration = requiredNumber(s, 'durationInSeconds');
  const id = optionalString(s, 'summaryId') ?? `${start}:${optionalString(s, 'activityType') ?? 'UNKNOWN'}`;
  const zone = zoneOffset(s);
  const p = provenance(ctx.provider, true);
  const from = iso(start);
  const to = iso(start + duration);
  const meta = { summaryId: s.summaryId, activityType: s.activityType, intensity: s.intensity, met: s.met, ...zoneMetadata(zone) };
  const out: ParseItem[] = [];
  const steps = optionalNumber(s, 'steps');
  const energy = optionalNumber(s, 'activeKilocalories');
  const distance = optionalNumber(s, 'distanceInMeters');
  if (steps !== null && steps > 0) out.push(...part(ctx, 'steps', steps, () => quantity(p, `epochs:${id}:steps`, { type: 'step_count', value: steps, unit: '1', range: [0, 10_000] }, from, to, meta)));
  if (energy !== null && energy > 0)
    out.push(...part(ctx, 'activeKilocalories', energy, () => quantity(p, `epochs:${id}:energy`, { type: 'active_energy_burned', value: energy, unit: 'kcal', range: [0, 1_000] }, from, to, meta)));
  if (distance !== null && distance > 0)
    out.push(...part(ctx, 'distanceInMeters', distance, () => quantity(p, `epochs:${id}:distance`, { type: 'distance', value: distance, unit: 'm', range: [0, 20_000] }, from, to, meta)));
  return out;
}
