import type { NormalizedRecord } from '../../../../commands/ingestion/records.js';
import { isObject, optionalNumber, quantity, RecordError, type Json } from '../../shared/connectorRecords.js';
import { readDate } from '../../shared/providerTimes.js';
import { clockOn, fixedZone, polarProvenance } from './polarTimes.js';

/**
 * A day of continuous heart rate, stored as `{offset, answer}`: samples carry local clock times
 * (`sample_time`) of the answer's `date`, placed with the offset the pull learnt for that day.
 */
export function decodeContinuousHeartRate(doc: Json): NormalizedRecord[] {
  const answer = doc.answer;
  if (!isObject(answer)) throw new RecordError('answer is missing');
  const date = readDate(answer.date, 'date');
  if (typeof doc.offset !== 'string') throw new RecordError(`no zone offset is known for ${date}`);
  if (!Array.isArray(answer.heart_rate_samples)) throw new RecordError('heart_rate_samples is not an array');
  const zone = fixedZone(doc.offset);
  const p = polarProvenance(null);
  const out: NormalizedRecord[] = [];
  answer.heart_rate_samples.forEach((s: unknown, i: number) => {
    if (!isObject(s) || typeof s.sample_time !== 'string') throw new RecordError(`heart_rate_samples[${i}].sample_time is missing`);
    const bpm = optionalNumber(s.heart_rate, `heart_rate_samples[${i}].heart_rate`);
    if (!bpm) return;
    if (bpm > 300) throw new RecordError(`heart_rate_samples[${i}] ${bpm} is not a heart rate`);
    const t = clockOn(date, s.sample_time, zone, `heart_rate_samples[${i}].sample_time`);
    out.push(quantity(p, { external_id: `chr-${date}-${s.sample_time}`, type: 'heart_rate', value: bpm, unit: 'count/min', start: t, end: t, metadata: { timezone: doc.offset, context: 'continuous' } }));
  });
  return out;
}
