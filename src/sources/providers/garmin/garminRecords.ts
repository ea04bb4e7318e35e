import type { Metadata, Provenance, QuantityRecord } from '../../../../commands/ingestion/records.js';
import { quantity as sharedQuantity } from '../../shared/connectorRecords.js';
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

/** A sample in the catalog's storage unit (shared builder), after Garmin's plausibility range. */
export function quantity(p: Provenance, externalId: string, spec: QuantitySpec, start: string, end: string, metadata: Metadata): QuantityRecord {
  const [min, max] = spec.range;
  if (spec.value < min || spec.value > max) throw new SummaryError(`${spec.type} ${spec.value} ${spec.unit} is outside ${min}..${max}`);
  const record = sharedQuantity(p, { external_id: externalId, type: spec.type, value: spec.value, unit: spec.unit, start: Date.parse(start), end: Date.parse(end), metadata });
  return { ...record, device_model: p.device };
}
