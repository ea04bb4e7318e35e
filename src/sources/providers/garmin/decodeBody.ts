import type { ParseItem } from '../../../../commands/ingestion/records.js';
import { calendarDate, epochSeconds, iso, optionalNumber, optionalString, summaryMetadata, SummaryError, zoneMetadata, zoneOffset, type Summary } from './fields.js';
import { part, type DecodeContext } from './decodeContext.js';
import { provenance, type QuantitySpec } from './garminRecords.js';
import { quantity } from './garminRecords.js';

/**
 * `bodyComps`: a weighing (Index scale, or entered in Garmin Connect) at
 * `measurementTimeInSeconds`. → body mass (Garmin sends grams), body fat %, BMI, one record each,
 * keyed by the summaryId and the measure. Muscle and bone mass stay in metadata (no catalog type
 * means the same: muscle mass is not lean body mass).
 */
export function decodeBodyComp(s: Summary, ctx: DecodeContext): ParseItem[] {
  const id = optionalString(s, 'summaryId');
  if (id === null) throw new SummaryError('summaryId is missing');
  const t = iso(epochSeconds(s, 'measurementTimeInSeconds'));
  const zone = zoneOffset(s, 'measurementTimeOffsetInSeconds');
  // A scale is not worn; Garmin does not say whether a value was typed in.
  const p = provenance(ctx.provider, false);
  const meta = { ...summaryMetadata(s), ...zoneMetadata(zone) };
  const measures: [field: string, key: string, spec: (v: number) => QuantitySpec][] = [
    ['weightInGrams', 'weight', (v) => ({ type: 'body_mass', value: v, unit: 'g', range: [1_000, 500_000] })],
    ['bodyFatInPercent', 'body_fat', (v) => ({ type: 'body_fat_percentage', value: v, unit: '%', range: [1, 80] })],
    ['bodyMassIndex', 'bmi', (v) => ({ type: 'body_mass_index', value: v, unit: 'count', range: [5, 100] })],
  ];
  const out: ParseItem[] = [];
  for (const [field, key, spec] of measures) {
    const v = optionalNumber(s, field);
    if (v === null) continue;
    out.push(...part(ctx, field, v, () => quantity(p, `bodyComps:${id}:${key}`, spec(v), t, t, meta)));
  }
  if (out.length === 0) throw new SummaryError('no weight, body fat or BMI in the summary');
  return out;
}

/**
 * `userMetrics`: values Garmin computes per day (VO2 max, fitness age). → VO2 max over the
 * calendar day, keyed by the date (Garmin sends no time of day for them).
 */
export function decodeUserMetrics(s: Summary, ctx: DecodeContext): ParseItem[] {
  const date = calendarDate(s);
  const vo2 = optionalNumber(s, 'vo2Max');
  if (vo2 === null) return [];
  const from = `${date}T00:00:00.000Z`;
  const to = new Date(Date.parse(from) + 86_400_000).toISOString();
  return part(ctx, 'vo2Max', vo2, () =>
    quantity(provenance(ctx.provider, true), `userMetrics:${date}:vo2_max`, { type: 'vo2_max', value: vo2, unit: 'mL/(kg.min)', range: [10, 100] }, from, to, { ...summaryMetadata(s), date }),
  );
}
