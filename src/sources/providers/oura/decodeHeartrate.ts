import type { NormalizedRecord, Provenance } from '../../../../commands/ingestion/records.js';
import { optionalString, quantity, RecordError, requiredNumber, type Json } from '../../shared/connectorRecords.js';
import { iso, readInstant } from '../../shared/providerTimes.js';

/**
 * One heart-rate reading of `/v2/usercollection/heartrate`: `{bpm, source, timestamp}`. Oura sends
 * these timestamps in UTC, so no local offset is known and none is recorded. `source` (awake,
 * rest, sleep, session, live, workout) says what the ring was doing and stays in metadata.
 */
export function decodeHeartrate(doc: Json, p: Provenance): NormalizedRecord[] {
  const t = readInstant(doc.timestamp, 'timestamp');
  const bpm = requiredNumber(doc.bpm, 'bpm');
  if (bpm < 20 || bpm > 250) throw new RecordError(`bpm ${bpm} is outside 20..250`);
  const source = optionalString(doc.source, 'source');
  return [quantity(p, { external_id: `heartrate:${iso(t.ms)}`, type: 'heart_rate', value: bpm, unit: 'count/min', start: t.ms, end: t.ms, metadata: source ? { source } : {} })];
}
