import type { Meta } from 'fhir/r4.js';
import type { QualityFlag } from '../catalog/qualityFlags.js';

/** The code system of the service's quality flags (contracts §15) as FHIR `meta.tag` codings. */
export const QUALITY_TAG_SYSTEM = 'urn:wellstream:quality';

const DISPLAY: Readonly<Record<QualityFlag, string>> = {
  implausible_value: 'Value outside the physiological range of its type',
  implausible_duration: 'Duration implausibly long',
  future: 'Ends more than 10 minutes after it was received',
  manual: 'Entered by hand',
};

/**
 * An Observation's `meta` with the record's quality flags as tags (docs/fhir.md "Quality flags"):
 * a tag needs no extension definition, every FHIR client keeps it, and a server may search it
 * with `_tag`. `profile` keeps the vital-signs profile where the Observation has one. Empty when
 * there is neither.
 */
export function metaWithQuality(flags: readonly QualityFlag[] | undefined, profile?: string): { meta?: Meta } {
  const tag = (flags ?? []).map((code) => ({ system: QUALITY_TAG_SYSTEM, code, display: DISPLAY[code] }));
  if (!tag.length && !profile) return {};
  return { meta: { ...(profile ? { profile: [profile] } : {}), ...(tag.length ? { tag } : {}) } };
}
