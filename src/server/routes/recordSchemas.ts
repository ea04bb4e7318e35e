import { z } from 'zod';
import { QUALITY_FLAGS, type QualityFlag } from '../../catalog/qualityFlags.js';
import { DateTime } from '../schemas.js';

/** Response pieces shared by the record reads. Provenance: every record's (spec "Resources and their fields"). */
export const Provenance = {
  provider: z.string().describe('The integration the record came through'),
  source: z.string().describe('The vendor that produced it (the provider when unknown)'),
  device: z.string().nullable(),
  ingested_at: DateTime,
};

/** Where a sample was recorded, in HealthKit's terms (null where the source does not say). */
export const SampleOrigin = {
  source_name: z.string().nullable(),
  source_bundle_id: z.string().nullable(),
  device_model: z.string().nullable(),
  product_type: z.string().nullable(),
};

type SampleOriginFields = { source_name: string | null; source_bundle_id: string | null; device_model: string | null; product_type: string | null };

export const sampleOriginOf = (d: SampleOriginFields) => ({ source_name: d.source_name, source_bundle_id: d.source_bundle_id, device_model: d.device_model, product_type: d.product_type });

type SampleDocFields = SampleOriginFields &
  ProvenanceFields & { quality?: readonly QualityFlag[] } & { start_date: string; end_date: string; external_id: string; primary: boolean; was_user_entered: boolean; metadata: Record<string, unknown> };

/** What a quantity sample and a category sample answer alike, after their type and value. */
export const sampleFieldsOf = (d: SampleDocFields) => ({
  start_date: d.start_date,
  end_date: d.end_date,
  ...sampleOriginOf(d),
  external_id: d.external_id,
  is_primary_source: d.primary,
  was_user_entered: d.was_user_entered,
  metadata: d.metadata,
  ...recordProvenanceOf(d),
});

export const Metadata = z.record(z.string(), z.unknown()).describe('Provider fields as sent');

export const IsPrimarySource = z
  .boolean()
  .describe('True when the merged view lists this record: no better ranked source has a matching record (spec "Merged view")');

export const RecordId = z.number().int().describe('Integer record id');

type ProvenanceFields = { provider: string; source: string; device: string | null; ingested_at: string };

export const provenanceOf = (d: ProvenanceFields) => ({ provider: d.provider, source: d.source, device: d.device, ingested_at: d.ingested_at });

/** A record's quality flags (contracts §15, docs/quality.md); child rows (phases, route points, beats) are read with their record. */
export const Quality = z
  .array(z.enum(QUALITY_FLAGS))
  .describe(
    'Quality flags, empty when none: implausible_value (outside the range the quantity catalog gives for its type), implausible_duration (a sleep session over 16 h, a workout over 24 h), future (ending more than 10 minutes after it was received), manual (entered by hand). The first three leave the record out of the merged view and of statistics; it stays listed with view=all',
  );

/** What every record answers about where it came from and how far to trust it. */
export const RecordProvenance = { ...Provenance, quality: Quality };

export const recordProvenanceOf = (d: ProvenanceFields & { quality?: readonly QualityFlag[] }) => ({ ...provenanceOf(d), quality: d.quality ? [...d.quality] : [] });

/**
 * An integer id from a path segment (session_id, workout_id: integer int64). Anything that is
 * not a non-negative safe integer names no record: the caller answers 404, not 400.
 */
export function integerIdParam(value: string): number | null {
  if (!/^\d{1,16}$/.test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

/** Integers the spec promises, even when a provider sent a fraction. */
export const int = (v: number): number => Math.round(v);
export const intOrNull = (v: number | null): number | null => (v === null ? null : Math.round(v));
