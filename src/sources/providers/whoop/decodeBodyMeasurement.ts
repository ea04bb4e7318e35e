import type { NormalizedRecord, Provenance } from '../../../../commands/ingestion/records.js';
import { optionalNumber, quantity, RecordError, type Json } from '../../shared/connectorRecords.js';

/**
 * `/developer/v2/user/measurement/body`: height (m) and weight (kg) as the member entered them,
 * and the maximum heart rate WHOOP uses for zones. No time comes with them: they are dated when
 * the answer was received and named by that day, so each day keeps at most one of each.
 */
export function decodeBodyMeasurement(doc: Json, p: Provenance, receivedAt: string): NormalizedRecord[] {
  const at = Date.parse(receivedAt);
  if (!Number.isFinite(at)) throw new RecordError('the payload has no receipt time');
  const day = receivedAt.slice(0, 10);
  const height = optionalNumber(doc.height_meter, 'height_meter');
  const weight = optionalNumber(doc.weight_kilogram, 'weight_kilogram');
  if (height !== null && (height <= 0 || height > 3)) throw new RecordError(`height_meter ${height} is outside 0..3`);
  if (weight !== null && (weight <= 0 || weight > 500)) throw new RecordError(`weight_kilogram ${weight} is outside 0..500`);
  const entered = { ...p, body_worn: false };
  const span = { start: at, end: at, metadata: { max_heart_rate: doc.max_heart_rate ?? null }, was_user_entered: true };
  const out: NormalizedRecord[] = [];
  if (height !== null) out.push(quantity(entered, { ...span, external_id: `body_measurement:${day}:height`, type: 'height', value: height, unit: 'm' }));
  if (weight !== null) out.push(quantity(entered, { ...span, external_id: `body_measurement:${day}:weight`, type: 'body_mass', value: weight, unit: 'kg' }));
  return out;
}
