import type { CapabilityStatement } from 'fhir/r4.js';

/**
 * Reads rule 5 and contracts §10: what the FHIR view serves, and only that. No operation is
 * served, so none is listed (FHIR forbids an empty `operation` array).
 */
export function capabilityStatement(baseUrl: string, date: string): CapabilityStatement {
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date,
    kind: 'instance',
    implementation: { description: "Wellstream FHIR R4 view of one user's data (read only)", url: baseUrl },
    fhirVersion: '4.0.1',
    format: ['application/fhir+json'],
    rest: [
      {
        mode: 'server',
        security: { description: 'Authorization: Bearer with a tenant API key; the path names the user. Read only.' },
        resource: [
          {
            type: 'Patient',
            interaction: [{ code: 'read' }, { code: 'search-type' }],
          },
          {
            type: 'Observation',
            interaction: [{ code: 'read' }, { code: 'search-type' }],
            searchParam: [
              {
                name: 'code',
                definition: 'http://hl7.org/fhir/SearchParameter/clinical-code',
                type: 'token',
                documentation: 'A LOINC code, http://loinc.org|<code>, or a comma list of them',
              },
              {
                name: 'date',
                definition: 'http://hl7.org/fhir/SearchParameter/clinical-date',
                type: 'date',
                documentation: 'Repeatable; prefixes ge, gt, le, lt, eq; bounds the start of the observation',
              },
              { name: '_count', definition: 'urn:wellstream:fhir:searchparameter:count', type: 'number', documentation: 'Page size, 1 to 1000 (default 100)' },
              { name: 'view', definition: 'urn:wellstream:fhir:searchparameter:view', type: 'token', documentation: 'merged (default): best ranked source only; all: every source' },
            ],
          },
        ],
      },
    ],
  };
}
