import type { NormalizedRecord, Provenance } from '../../../../commands/ingestion/records.js';
import { optionalNumber, quantity, RecordError, type Json } from '../../shared/connectorRecords.js';

/**
 * `/v2/usercollection/personal_info`: the weight (kg) and height (m) the user typed into the Oura
 * app. They carry no time, so they are dated when the answer was received and named by that day:
 * one value per day, a changed value stored as a new payload and sample. Email, age and sex are
 * not kept in any record.
 */
export function decodePersonalInfo(doc: Json, p: Provenance, receivedAt: string): NormalizedRecord[] {
  const at = Date.parse(receivedAt);
  if (!Number.isFinite(at)) throw new RecordError('the payload has no receipt time');
  const day = receivedAt.slice(0, 10);
  const entered = { ...p, body_worn: false };
  const weight = optionalNumber(doc.weight, 'weight');
  const height = optionalNumber(doc.height, 'height');
  if (weight !== null && (weight <= 0 || weight > 500)) throw new RecordError(`weight ${weight} is outside 0..500 kg`);
  if (height !== null && (height <= 0 || height > 3)) throw new RecordError(`height ${height} is outside 0..3 m`);
  const out: NormalizedRecord[] = [];
  const span = { start: at, end: at, metadata: {}, was_user_entered: true };
  if (weight !== null) out.push(quantity(entered, { ...span, external_id: `personal_info:${day}:weight`, type: 'body_mass', value: weight, unit: 'kg' }));
  if (height !== null) out.push(quantity(entered, { ...span, external_id: `personal_info:${day}:height`, type: 'height', value: height, unit: 'm' }));
  return out;
}
