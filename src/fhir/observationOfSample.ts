import type { Observation } from 'fhir/r4.js';
import type { SampleDoc } from '../../projections/records/samplesProjection.js';
import { LOINC, loincCoding } from '../catalog/loincDisplays.js';
import { findQuantityType } from '../catalog/quantityCatalog.js';
import { quantityTypeName } from '../catalog/quantityTypeNames.js';
import { metaWithQuality } from './qualityTags.js';

export { LOINC };
export const UCUM = 'http://unitsofmeasure.org';
const VITALS_PROFILE = 'http://hl7.org/fhir/StructureDefinition/vitalsigns';

/**
 * Quantity types that are vital signs (FHIR R4 Vital Signs): the specific profile where R4 has one
 * for the type, the generic one otherwise; `scale` turns the storage unit into the profile's unit,
 * and `codes` adds the LOINC code the profile fixes when the catalog's code is a more specific one.
 */
const VITAL_SIGNS: Record<string, { profile: string; ucum?: string; scale?: number; codes?: string[] }> = {
  heart_rate: { profile: 'http://hl7.org/fhir/StructureDefinition/heartrate' },
  resting_heart_rate: { profile: VITALS_PROFILE },
  respiratory_rate: { profile: 'http://hl7.org/fhir/StructureDefinition/resprate' },
  oxygen_saturation: { profile: 'http://hl7.org/fhir/StructureDefinition/oxygensat', codes: ['2708-6'] },
  body_temperature: { profile: 'http://hl7.org/fhir/StructureDefinition/bodytemp' },
  body_mass: { profile: 'http://hl7.org/fhir/StructureDefinition/bodyweight' },
  height: { profile: 'http://hl7.org/fhir/StructureDefinition/bodyheight', ucum: 'cm', scale: 100 },
  body_mass_index: { profile: 'http://hl7.org/fhir/StructureDefinition/bmi' },
  blood_pressure_systolic: { profile: VITALS_PROFILE },
  blood_pressure_diastolic: { profile: VITALS_PROFILE },
};

/** The FHIR id of a sample's Observation: ids of other record kinds get their own prefix. */
export const sampleObservationId = (id: number) => `sample-${id}`;
export function sampleIdOf(observationId: string): number | null {
  const m = /^sample-(\d{1,15})$/.exec(observationId);
  return m ? Number(m[1]) : null;
}

/** A quantity sample as an R4 Observation (contracts §10). */
export function observationOfSample(s: SampleDoc, patientId: string): Observation {
  const t = findQuantityType(s.type);
  if (!t?.loinc_code) throw new Error(`type ${s.type} has no LOINC code`);
  const vital = VITAL_SIGNS[s.type];
  const value = vital?.scale ? Math.round(s.value * vital.scale * 1e6) / 1e6 : s.value;
  const unit = vital?.ucum ?? t.ucum_unit;
  const instant = s.start_date === s.end_date;
  return {
    resourceType: 'Observation',
    id: sampleObservationId(s.id),
    ...metaWithQuality(s.quality, vital?.profile),
    status: 'final',
    ...(vital ? { category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs', display: 'Vital Signs' }] }] } : {}),
    code: { coding: [t.loinc_code, ...(vital?.codes ?? [])].map(loincCoding), text: quantityTypeName(s.type) },
    subject: { reference: `Patient/${patientId}` },
    ...(instant ? { effectiveDateTime: s.start_date } : { effectivePeriod: { start: s.start_date, end: s.end_date } }),
    valueQuantity: { value, unit, system: UCUM, code: unit },
    device: { display: s.device ?? s.device_model ?? s.source_name ?? s.source },
  };
}
