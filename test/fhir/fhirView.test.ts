import { Client } from 'fhir-kit-client';
import type { Bundle, CapabilityStatement, Observation, OperationOutcome, Patient } from 'fhir/r4.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOINC_DISPLAYS } from '../../src/catalog/loincDisplays.js';
import { sleepSession, workout } from '../projections/records/fixtures.js';
import { ingestRecords, ingestSamples, quantity } from '../server/records/pipelineFixtures.js';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { validateR4 } from './r4Validator.js';

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;
let userId: string;
let base: string;
let fhir: Client;

const at = (i: number) => new Date(Date.parse('2026-11-01T00:00:00Z') + i * 600_000).toISOString();

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  tenant = await t.createTenant('fhir-a');
  other = await t.createTenant('fhir-b');
  userId = (await t.createUser(tenant.apiKey, { external_ref: 'patient-7' })).id;
  base = `http://127.0.0.1:${address.port}/v1/users/${userId}/fhir`;
  fhir = new Client({ baseUrl: base, customHeaders: { Authorization: `Bearer ${tenant.apiKey}` } });
  await ingestSamples(t, { userId, tenantId: tenant.id }, [
    ...Array.from({ length: 12 }, (_, i) => quantity({ type: 'heart_rate', unit: 'count/min', start_date: at(i), end_date: at(i), value: 60 + i, device: 'Apple Watch' })),
    // The same minute from a lower ranked source: hidden in the merged view.
    quantity({ type: 'heart_rate', unit: 'count/min', start_date: at(0), end_date: at(0), value: 99, provider: 'device-b', source: 'samsung', body_worn: false }),
    quantity({ type: 'step_count', unit: 'count', start_date: at(1), value: 250 }),
    quantity({ type: 'body_mass', unit: 'kg', start_date: at(2), end_date: at(2), value: 71.5 }),
    quantity({ type: 'height', unit: 'm', start_date: at(3), end_date: at(3), value: 1.8 }),
    quantity({ type: 'oxygen_saturation', unit: '%', start_date: at(4), end_date: at(4), value: 97 }),
    quantity({ type: 'body_temperature', unit: 'degC', start_date: at(5), end_date: at(5), value: 36.6 }),
    quantity({ type: 'respiratory_rate', unit: 'count/min', start_date: at(6), end_date: at(6), value: 14 }),
    quantity({ type: 'blood_pressure_systolic', unit: 'mmHg', start_date: at(7), end_date: at(7), value: 120 }),
    quantity({ type: 'body_mass_index', unit: 'count', start_date: at(8), end_date: at(8), value: 22.1 }),
    // No LOINC code in the catalog: not served as an Observation.
    quantity({ type: 'flights_climbed', unit: 'count', start_date: at(9), value: 3 }),
  ]);
  await ingestRecords(t, { userId, tenantId: tenant.id }, [sleepSession()]);
  await ingestRecords(t, { userId, tenantId: tenant.id }, [workout()]);
});

afterAll(async () => {
  await t.close();
});

async function allObservations(searchParams: Record<string, string | number | string[]>): Promise<{ pages: Bundle[]; observations: Observation[] }> {
  const pages: Bundle[] = [];
  let page = (await fhir.search({ resourceType: 'Observation', searchParams })) as unknown as Bundle;
  for (;;) {
    validateR4(page);
    pages.push(page);
    if (!page.link?.some((l) => l.relation === 'next')) break;
    page = (await fhir.nextPage({ bundle: page as never })) as unknown as Bundle;
  }
  return { pages, observations: pages.flatMap((p) => (p.entry ?? []).map((e) => e.resource as Observation)) };
}

describe('FHIR R4 view (contracts §10, reads rule 5)', () => {
  it('metadata is a valid R4 CapabilityStatement, fhirVersion 4.0.1, application/fhir+json, listing only what is served', async () => {
    const res = await t.call('GET', `/v1/users/${userId}/fhir/metadata`, { key: tenant.apiKey });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/fhir\+json/);
    const cs = res.json() as CapabilityStatement;
    validateR4(cs);
    expect(cs).toMatchObject({ resourceType: 'CapabilityStatement', fhirVersion: '4.0.1', kind: 'instance', format: ['application/fhir+json'] });
    expect(cs.rest![0]!.resource!.map((r) => r.type)).toEqual(['Patient', 'Observation']);
    expect(cs.rest![0]!.resource![1]!.searchParam!.map((p) => p.name)).toEqual(['code', 'date', '_count', 'view']);
  });

  it('Patient search holds the one Patient of the user and Patient/{id} reads it', async () => {
    const bundle = (await fhir.search({ resourceType: 'Patient', searchParams: {} })) as unknown as Bundle;
    validateR4(bundle);
    expect(bundle.entry!.map((e) => e.resource!.id)).toEqual([userId]);
    const patient = (await fhir.read({ resourceType: 'Patient', id: userId })) as unknown as Patient;
    validateR4(patient);
    expect(patient.identifier![0]!.value).toBe('patient-7');
  });

  it('Observation search pages by next links to the end; every resource validates, vital signs against their R4 profiles', async () => {
    const { pages, observations } = await allObservations({ _count: 5 });
    expect(pages.length).toBe(5);
    expect(observations.length).toBe(22);
    for (const o of observations) validateR4(o);
    const byCode = (code: string) => observations.filter((o) => o.code.coding!.some((c) => c.code === code));
    const hr = byCode('8867-4');
    expect(hr.length).toBe(12);
    expect(hr[0]).toMatchObject({
      meta: { profile: ['http://hl7.org/fhir/StructureDefinition/heartrate'] },
      category: [{ coding: [{ code: 'vital-signs' }] }],
      effectiveDateTime: at(0),
      valueQuantity: { value: 60, system: 'http://unitsofmeasure.org', code: '/min' },
      subject: { reference: `Patient/${userId}` },
      device: { display: 'Apple Watch' },
    });
    // Codings carry the catalog's LOINC display, code.text a human name (issue 23).
    expect(hr[0]!.code).toEqual({ coding: [{ system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' }], text: 'Heart rate' });
    for (const o of observations) {
      for (const c of o.code.coding ?? []) expect(c.display, `${o.id} ${c.code}`).toEqual(LOINC_DISPLAYS[c.code!]);
      expect(o.code.text).toMatch(/^[A-Z][a-z]/);
      for (const comp of o.component ?? []) for (const c of comp.code.coding ?? []) expect(c.display).toEqual(LOINC_DISPLAYS[c.code!]);
    }
    const steps = byCode('55423-8')[0]!;
    expect(steps.code.text).toBe('Step count');
    expect(steps.category).toBeUndefined();
    expect(steps.effectivePeriod).toEqual({ start: at(1), end: new Date(Date.parse(at(1)) + 60_000).toISOString() });
    expect(byCode('8302-2')[0]!.valueQuantity).toMatchObject({ value: 180, code: 'cm' });
    const sleep = byCode('93832-4')[0]!;
    expect(sleep).toMatchObject({ effectivePeriod: { start: '2026-11-01T22:00:00.000Z', end: '2026-11-02T06:00:00.000Z' }, valueQuantity: { value: 420, code: 'min' } });
    expect(sleep.component!.map((c) => [c.code.coding![0]!.code, c.valueQuantity!.value])).toEqual([['93831-6', 90], ['93830-8', 225], ['93829-0', 105]]);
    expect(sleep.code).toEqual({ coding: [{ system: 'http://loinc.org', code: '93832-4', display: 'Sleep duration' }], text: 'Sleep session' });
    expect(sleep.component!.map((c) => c.code.text)).toEqual(['Deep sleep', 'Light sleep', 'REM sleep']);
  });

  it('the FHIR answer holds the same samples as the REST answer of the same query, in both views', async () => {
    for (const view of ['merged', 'all']) {
      const { observations } = await allObservations({ code: 'http://loinc.org|8867-4', view, _count: 4 });
      const rest = await t.call('GET', `/v1/users/${userId}/samples`, { key: tenant.apiKey, query: { type: 'heart_rate', view } });
      const ids = (rest.json() as { data: { id: number }[] }).data.map((s) => `sample-${s.id}`);
      expect(observations.map((o) => o.id)).toEqual(ids);
    }
  });

  it('sleep sessions are Observations with the same records as the sleep route', async () => {
    const { observations } = await allObservations({ code: '93832-4' });
    const rest = await t.call('GET', `/v1/users/${userId}/sleep`, { key: tenant.apiKey });
    expect(observations.map((o) => o.id)).toEqual((rest.json() as { data: { id: number }[] }).data.map((s) => `sleep-${s.id}`));
    const one = (await fhir.read({ resourceType: 'Observation', id: observations[0]!.id! })) as unknown as Observation;
    validateR4(one);
    expect(one).toEqual(observations[0]);
  });

  it('workouts are Observations of their duration with the same records as the workouts route', async () => {
    const { observations } = await allObservations({ code: '101691-4' });
    const rest = await t.call('GET', `/v1/users/${userId}/workouts`, { key: tenant.apiKey });
    const workouts = (rest.json() as { data: { id: number; type: string; start_date: string; end_date: string }[] }).data;
    expect(observations.map((o) => o.id)).toEqual(workouts.map((w) => `workout-${w.id}`));
    expect(observations[0]).toMatchObject({ code: { coding: [{ code: '101691-4', display: 'Duration of physical activity' }], text: `Workout: ${workouts[0]!.type.replace(/_/g, ' ')}` }, effectivePeriod: { start: workouts[0]!.start_date, end: workouts[0]!.end_date } });
    const one = (await fhir.read({ resourceType: 'Observation', id: observations[0]!.id! })) as unknown as Observation;
    validateR4(one);
    expect(one).toEqual(observations[0]);
  });

  it('code lists and date prefixes narrow the search', async () => {
    const { observations } = await allObservations({ code: '29463-7,8310-5', date: ['ge2026-11-01T00:20:00Z', 'le2026-11-01T00:50:00Z'] });
    expect(observations.map((o) => o.code.coding![0]!.code).sort()).toEqual(['29463-7', '8310-5']);
    const none = await allObservations({ code: '8867-4', date: 'gt2026-11-02' });
    expect(none.observations).toEqual([]);
  });

  it('Observation/{id} reads one; unknown ids, other tenants and bad parameters are OperationOutcomes with the status', async () => {
    const { observations } = await allObservations({ code: '8867-4', _count: 1 });
    const one = (await fhir.read({ resourceType: 'Observation', id: observations[0]!.id! })) as unknown as Observation;
    validateR4(one);
    expect(one).toEqual(observations[0]);
    const cases: [string, string, number][] = [
      [tenant.apiKey, `/v1/users/${userId}/fhir/Observation/sample-999999`, 404],
      [tenant.apiKey, `/v1/users/${userId}/fhir/Observation/nope`, 404],
      [tenant.apiKey, `/v1/users/${userId}/fhir/Patient/${other.id}`, 404],
      [other.apiKey, `/v1/users/${userId}/fhir/Observation`, 404],
      [other.apiKey, `/v1/users/${userId}/fhir/metadata`, 404],
      [tenant.apiKey, `/v1/users/${userId}/fhir/Observation?_count=1001`, 400],
      [tenant.apiKey, `/v1/users/${userId}/fhir/Observation?date=yesterday`, 400],
      [tenant.apiKey, `/v1/users/${userId}/fhir/Observation?code=http://snomed.info/sct|123`, 400],
      [tenant.apiKey, `/v1/users/${userId}/fhir/Observation?_cursor=forged.cursor`, 400],
      ['', `/v1/users/${userId}/fhir/Observation`, 401],
    ];
    for (const [key, url, status] of cases) {
      const res = await t.call('GET', url, key ? { key } : {});
      expect(res.statusCode, url).toBe(status);
      expect(res.headers['content-type'], url).toMatch(/^application\/fhir\+json/);
      const body = res.json() as OperationOutcome;
      validateR4(body);
      expect(body.resourceType).toBe('OperationOutcome');
    }
  });
});
