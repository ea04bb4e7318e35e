import type { Metadata, ObservationRecord, Provenance, QuantityRecord } from '../../../../commands/ingestion/records.js';
import { toStorage } from '../device-b/unitMapping.js';

/**
 * Records every export decoder builds the same way. Values go to their catalog type's storage unit
 * through device-b's UCUM mapping (which also converts blood glucose between mmol/L and mg/dL);
 * what the export stored stays as `original_value` / `original_unit`.
 */

export type SampleFields = Pick<QuantityRecord, 'source_name' | 'source_bundle_id' | 'device_model' | 'product_type' | 'was_user_entered'>;

export function catalogQuantity(
  p: Provenance,
  sample: SampleFields,
  q: { external_id: string; type: string; stored: { value: number; ucum: string }; start: number; end: number; metadata: Metadata },
): QuantityRecord {
  const v = toStorage(q.type, q.stored);
  return {
    kind: 'quantity',
    ...p,
    external_id: q.external_id,
    type: q.type,
    value: v.value,
    unit: v.unit,
    start_date: new Date(q.start).toISOString(),
    end_date: new Date(q.end).toISOString(),
    ...sample,
    metadata: { ...q.metadata, original_value: q.stored.value, original_unit: q.stored.ucum },
  };
}

/** A blood pressure reading as device-b stores it: an observation whose components are its two samples. */
export function bloodPressureObservation(p: Provenance, externalId: string, systolic: QuantityRecord, diastolic: QuantityRecord, metadata: Metadata): ObservationRecord {
  return {
    kind: 'observation',
    ...p,
    external_id: externalId,
    code: 'blood_pressure',
    loinc_code: '85354-9',
    start_date: systolic.start_date,
    end_date: systolic.end_date,
    components: [
      { code: 'systolic', loinc_code: '8480-6', value: systolic.value, unit: systolic.unit },
      { code: 'diastolic', loinc_code: '8462-4', value: diastolic.value, unit: diastolic.unit },
    ],
    metadata,
  };
}
