import type { Metadata, Provenance, QuantityRecord } from '../../../commands/ingestion/records.js';
import { toStorageUnit } from '../../catalog/units.js';
import { SummaryError } from './fields.js';

/**
 * Record builders shared by the Garmin decoders. Every Garmin record comes from Garmin's own
 * devices and apps (`source` garmin); wrist data is body-worn, scale and manual entries are not.
 */
export function provenance(provider: string, bodyWorn: boolean, device: string | null = null): Provenance {
  return { provider, source: 'garmin', device, body_worn: bodyWorn };
}

export type QuantitySpec = {
  type: string;
  value: number;
  /** The unit Garmin's field is in (UCUM); converted to the catalog's storage unit. */
  unit: string;
  /** Plausible range in Garmin's unit: a value outside is refused, not stored. */
  range: readonly [min: number, max: number];
};

export function quantity(
  p: Provenance,
  externalId: string,
  spec: QuantitySpec,
  start: string,
  end: string,
  metadata: Metadata,
  wasUserEntered = false,
): QuantityRecord {
  const [min, max] = spec.range;
  if (spec.value < min || spec.value > max) throw new SummaryError(`${spec.type} ${spec.value} ${spec.unit} is outside ${min}..${max}`);
  const stored = toStorageUnit(spec.type, spec.value, spec.unit);
  return {
    kind: 'quantity',
    ...p,
    external_id: externalId,
    type: spec.type,
    value: stored.value,
    unit: stored.unit,
    start_date: start,
    end_date: end,
    source_name: 'Garmin Connect',
    source_bundle_id: null,
    device_model: p.device,
    product_type: null,
    was_user_entered: wasUserEntered,
    metadata: { ...metadata, original_value: spec.value, original_unit: spec.unit },
  };
}
