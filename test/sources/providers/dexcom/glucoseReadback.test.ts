import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Bundle, Observation } from 'fhir/r4.js';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dexcomGlucoseAt, DEXCOM_SANDBOX_ZONE } from '../../../../src/sandbox/data/dexcom.js';
import { sandboxUserOf, startSandbox, type Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { sandboxSettings } from '../../../../src/sandbox/sandboxSettings.js';
import { validateR4 } from '../../../fhir/r4Validator.js';
import { backfillThroughSandbox } from '../../../connections/consentFlow.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../../../support/server.js';

/**
 * Issue 22 acceptance "Glucose": a day of 5-minute EGVs pulled from Dexcom (the sandbox, its clock
 * two days after Europe's autumn clock change) reads back exactly (values, units, times) through
 * the samples route, the hourly statistics in the wearer's zone on the 25-hour day, MCP
 * get_samples and the FHIR view (every Observation valid R4, LOINC 2339-0).
 */
const DAY = '2026-10-25'; // Europe/Berlin leaves summer time: 25 local hours.
const SANDBOX_NOW = new Date('2026-10-27T12:00:00Z');
const dayStart = DateTime.fromISO(DAY, { zone: DEXCOM_SANDBOX_ZONE }).toMillis();
const dayEnd = DateTime.fromISO(DAY, { zone: DEXCOM_SANDBOX_ZONE }).plus({ days: 1 }).toMillis();
const marks = Array.from({ length: (dayEnd - dayStart) / 300_000 }, (_, i) => dayStart + i * 300_000);
const user = sandboxUserOf('dexcom');
const expected = marks.map((ms) => ({ start_date: new Date(ms).toISOString(), value: dexcomGlucoseAt(user, ms) }));
const range = { start: new Date(dayStart).toISOString(), end: new Date(dayEnd).toISOString() };

let sandbox: Sandbox;
let t: TestApp;
let tenant: TenantHandle;
let userId: string;
let base: string;
beforeAll(async () => {
  sandbox = await startSandbox({ now: () => SANDBOX_NOW });
  // The service's backfill reaches back past the sandbox's data; dataRange bounds what is asked.
  t = await startTestApp(sandboxSettings(sandbox, ['dexcom']), { syncSettings: { backfillDays: 60 }, syncPolling: false });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  tenant = await t.createTenant('glucose');
  userId = (await t.createUser(tenant.apiKey)).id;
  const run = await backfillThroughSandbox(t, tenant.apiKey, userId, 'dexcom');
  expect(run).toMatchObject({ status: 'succeeded' });
}, 180_000);
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

describe('a day of Dexcom EGVs reads back exactly (issue 22)', () => {
  it(`samples: ${expected.length} readings of ${DAY}, each value in mg/dL at its five-minute mark, mg/dL as sent kept`, async () => {
    const res = await t.call('GET', `/v1/users/${userId}/samples`, { key: tenant.apiKey, query: { type: 'blood_glucose', ...range, view: 'all', limit: '1000' } });
    expectStatus(res, 200);
    const data = (res.json() as { data: { start_date: string; value: number; unit: string; provider: string; metadata: Record<string, unknown> }[] }).data;
    const got = data.map((s) => ({ start_date: new Date(s.start_date).toISOString(), value: s.value })).sort((a, b) => a.start_date.localeCompare(b.start_date));
    expect(got).toEqual(expected);
    expect(data.every((s) => s.unit === 'mg/dL' && s.provider === 'dexcom' && s.metadata.original_unit === 'mg/dL')).toBe(true);
  });

  it('statistics per hour in Europe/Berlin: 25 buckets on the day of the change, 12 readings each, the mean of each local hour', async () => {
    const res = await t.call('GET', `/v1/users/${userId}/samples/stats`, { key: tenant.apiKey, query: { type: 'blood_glucose', start: DAY, end: '2026-10-26', interval: 'hour', tz: DEXCOM_SANDBOX_ZONE, view: 'all' } });
    expectStatus(res, 200);
    const buckets = (res.json() as { buckets: { start: string; count: number; avg: number; unit: string }[] }).buckets;
    expect(buckets).toHaveLength(25);
    // The repeated 02:00 hour appears twice, with its two offsets.
    expect(buckets.filter((b) => b.start.startsWith(`${DAY}T02:00:00`)).map((b) => b.start.slice(19))).toEqual(['+02:00', '+01:00']);
    for (const b of buckets) {
      const from = Date.parse(b.start);
      const inHour = expected.filter((e) => Date.parse(e.start_date) >= from && Date.parse(e.start_date) < from + 3_600_000).map((e) => e.value);
      expect(b.count).toBe(12);
      expect(b.unit).toBe('mg/dL');
      expect(b.avg).toBeCloseTo(inHour.reduce((a, v) => a + v, 0) / inHour.length, 9);
    }
  });

  it('MCP get_samples with type blood_glucose answers the same readings', async () => {
    const client = new Client({ name: 'glucose-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tenant.apiKey}` } } }));
    try {
      const r = (await client.callTool({ name: 'get_samples', arguments: { user_id: userId, type: 'blood_glucose', ...range, view: 'all', limit: 1000 } })) as { isError?: boolean; content: { text: string }[] };
      expect(r.isError ?? false).toBe(false);
      const answer = JSON.parse(r.content[0]!.text) as { records: { start_date: string; value: number; unit: string }[]; next_cursor: string | null };
      expect(answer.next_cursor).toBeNull();
      expect(answer.records.map((s) => ({ start_date: new Date(s.start_date).toISOString(), value: s.value })).sort((a, b) => a.start_date.localeCompare(b.start_date))).toEqual(expected);
      expect(answer.records.every((s) => s.unit === 'mg/dL')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('FHIR: Observations coded LOINC 2339-0 in mg/dL, valid R4, one per reading', async () => {
    const observations: Observation[] = [];
    let url: string | null = `/v1/users/${userId}/fhir/Observation?code=http://loinc.org|2339-0&date=ge${range.start}&date=lt${range.end}&_count=1000`;
    for (let page = 0; url && page < 5; page++) {
      const res = await t.call('GET', url, { key: tenant.apiKey });
      expectStatus(res, 200);
      const bundle = res.json() as Bundle;
      validateR4(bundle);
      for (const e of bundle.entry ?? []) observations.push(e.resource as Observation);
      const next = bundle.link?.find((l) => l.relation === 'next')?.url;
      url = next ? new URL(next).pathname + new URL(next).search : null;
    }
    expect(observations).toHaveLength(expected.length);
    for (const o of observations) {
      validateR4(o);
      expect(o.code.coding?.some((c) => c.system === 'http://loinc.org' && c.code === '2339-0')).toBe(true);
      expect(o.valueQuantity).toMatchObject({ unit: 'mg/dL', system: 'http://unitsofmeasure.org', code: 'mg/dL' });
    }
    const got = observations.map((o) => ({ start_date: new Date(o.effectiveDateTime ?? o.effectivePeriod!.start!).toISOString(), value: o.valueQuantity!.value })).sort((a, b) => a.start_date.localeCompare(b.start_date));
    expect(got).toEqual(expected);
  });
});
