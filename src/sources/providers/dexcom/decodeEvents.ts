import type { NormalizedRecord, Provenance } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, optionalString, quantity, RecordError, requiredNumber, requiredString, type Json } from '../../shared/connectorRecords.js';
import { localOffset, readSystemTime } from './dexcomTimes.js';

/**
 * A user-entered event (`/v3/users/self/events`). The catalog has a home for carbs only
 * (`dietary_carbohydrates`, grams); insulin doses, exercise, health and notes entries have none
 * and decode to nothing (their answers stay stored, docs/connectors/dexcom.md). A deleted event
 * (`eventStatus` deleted) decodes to nothing either: the event it withdrew keeps its record
 * until a re-pull no longer answers it (the store never drops what a provider once sent).
 */
export function decodeEvent(doc: Json, p: Provenance): NormalizedRecord[] {
  const type = requiredString(doc.eventType, 'eventType');
  const status = optionalString(doc.eventStatus, 'eventStatus');
  if (status === 'deleted' || type !== 'carbs') return [];
  const recordId = requiredString(doc.recordId, 'recordId');
  const t = readSystemTime(doc.systemTime);
  const grams = requiredNumber(doc.value, 'value');
  const unit = optionalString(doc.unit, 'unit');
  if (unit !== null && unit !== 'grams') throw new RecordError(`carbs in ${JSON.stringify(unit).slice(0, 32)}, not grams`);
  if (grams < 0 || grams > 1000) throw new RecordError(`carbs ${grams} g is outside 0..1000`);
  const offset = localOffset(t.ms, doc.displayTime);
  return [
    quantity(p, {
      external_id: `event:${recordId}`,
      type: 'dietary_carbohydrates',
      value: grams,
      unit: 'g',
      start: t.ms,
      end: t.ms,
      metadata: { ...fieldsExcept(doc, ['value', 'unit']), ...(offset ? { timezone: offset } : {}) },
      was_user_entered: true,
    }),
  ];
}
