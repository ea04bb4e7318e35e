import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { realdataPath } from '../sources/files/realdata.js';
import { tusRequests } from './tusHelpers.js';
import { postUpload, waitForUpload } from './uploadHelpers.js';

/**
 * contracts §17: the import slug `dexcom-clarity` through the routes: the Clarity CSV by raw POST
 * (`text/csv`) or tus, read in the zone the uploader names; the real export's EGVs all stored and
 * read back with their values; sent again, everything `unchanged`; a body that is not a Clarity
 * export a 422 at the request, and one whose header cannot be read `failed` with the reason.
 */
let t: TestApp;
let tenant: TenantHandle;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('dexcom-clarity');
});
afterAll(async () => t?.close());

const { create, patch } = tusRequests(() => t);
const SLUG = 'dexcom-clarity';
const HEADER = 'Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info,Device Info,Source Device ID,Glucose Value (UNIT),Insulin Value (u),Carb Value (grams),Duration (hh:mm:ss),Glucose Rate of Change (UNIT/min),Transmitter Time (Long Integer)';
const clarity = (rows: string[], unit = 'mg/dL') => Buffer.from([HEADER.replaceAll('UNIT', unit), '1,,FirstName,,Jane,,,,,,,,', '2,,Device,,,Dexcom G6 Mobile App,iPhone G6,,,,,,', ...rows].join('\n') + '\n');
const small = () => clarity(['3,2024-01-15 07:30:00,EGV,,,,iPhone G6,101,,,,,100', '4,2024-01-15 07:35:00,EGV,,,,iPhone G6,104,,,,,400', '5,2024-01-15 07:40:00,Carbs,,,,iPhone G6,,,30,,,']);

async function uploader() {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  return { userId: user.id, token };
}
const outcome = async (userId: string, uploadId: string) => (await t.call('GET', `/v1/users/${userId}/uploads/${SLUG}/${uploadId}`, { key: tenant.apiKey })).json() as UploadResource;
async function glucose(userId: string, start: string, end: string) {
  const res = await t.call('GET', `/v1/users/${userId}/samples?type=blood_glucose&view=all&limit=1000&start=${start}&end=${end}`, { key: tenant.apiKey });
  expect(res.statusCode).toBe(200);
  return (res.json() as { data: { start_date: string; value: number; unit: string; metadata: Record<string, unknown> }[] }).data;
}

describe('dexcom-clarity through the routes (contracts §17)', { timeout: 300_000 }, () => {
  it('raw POST text/csv with Upload-Time-Zone: done, EGVs and carbs stored at the Berlin-offset instants', async () => {
    const { userId, token } = await uploader();
    expectStatus(await postUpload(t, SLUG, token, 'small', { body: small(), contentType: 'text/csv', headers: { 'upload-time-zone': 'Europe/Berlin' } }), 202);
    await waitForUpload(t, tenant.apiKey, userId, SLUG, 'small');
    expect(await outcome(userId, 'small')).toMatchObject({ status: 'done', records: { quantity: 3 }, rejected: 0 });
    const read = await glucose(userId, '2024-01-15T00:00:00Z', '2024-01-16T00:00:00Z');
    expect(read.map((s) => [s.start_date, s.value, s.unit])).toEqual([
      ['2024-01-15T06:30:00.000Z', 101, 'mg/dL'],
      ['2024-01-15T06:35:00.000Z', 104, 'mg/dL'],
    ]);
    expect(read[0]!.metadata).toMatchObject({ timezone: 'Europe/Berlin', timezone_source: 'upload', original_value: 101, original_unit: 'mg/dL' });
    expect(JSON.stringify(read)).not.toContain('Jane');
  });

  it('by tus with tz in its metadata: done, the same instants', async () => {
    const { userId, token } = await uploader();
    const body = small();
    const created = await create(token, body.length, { provider: SLUG, upload_id: 'small-tus', tz: 'Europe/Berlin' });
    expect(created.statusCode).toBe(201);
    expect((await patch(token, created.headers.location as string, 0, body)).statusCode).toBe(204);
    await waitForUpload(t, tenant.apiKey, userId, SLUG, 'small-tus');
    expect((await glucose(userId, '2024-01-15T00:00:00Z', '2024-01-16T00:00:00Z')).map((s) => s.start_date)).toEqual(['2024-01-15T06:30:00.000Z', '2024-01-15T06:35:00.000Z']);
  });

  it('a body that is not a Clarity export is a 422 problem at the request, and nothing is stored; by tus too', async () => {
    const { userId, token } = await uploader();
    for (const body of [Buffer.from('date,steps\n2024-01-01,5\n'), Buffer.from('Index,Timestamp (YYYY-MM-DDThh:mm:ss),Ev'), Buffer.from([0x50, 0x4b, 3, 4, 1, 2, 3])]) {
      const res = await postUpload(t, SLUG, token, 'garbage', { body, contentType: 'text/csv' });
      expect(res.statusCode).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json().detail).toMatch(/^this is not the CSV file Dexcom Clarity exports: its first line is not the header row/);
    }
    expect((await t.call('GET', `/v1/users/${userId}/uploads/${SLUG}/garbage`, { key: tenant.apiKey })).statusCode).toBe(404);
    const body = Buffer.from('date,steps\n2024-01-01,5\n');
    const created = await create(token, body.length, { provider: SLUG, upload_id: 'garbage-tus' });
    expect((await patch(token, created.headers.location as string, 0, body)).statusCode).toBe(422);
  });

  it('a header whose glucose unit it cannot read: failed, the reason in error, nothing stored', async () => {
    const { userId, token } = await uploader();
    expectStatus(await postUpload(t, SLUG, token, 'unit', { body: clarity(['3,2024-01-15 07:30:00,EGV,,,,iPhone G6,1.01,,,,,100'], 'g/L'), contentType: 'text/csv' }), 202);
    await waitForUpload(t, tenant.apiKey, userId, SLUG, 'unit');
    const u = await outcome(userId, 'unit');
    expect(u.status).toBe('failed');
    expect(u.error).toMatch(/the glucose column "Glucose Value \(g\/L\)" names no unit this import reads/);
    expect(u.records).toEqual({});
  });

  it('a type other than the CSV types is a 415 naming them, before the body is read', async () => {
    const { token } = await uploader();
    const res = await postUpload(t, SLUG, token, 'typed', { body: small(), contentType: 'image/png' });
    expect(res.statusCode).toBe(415);
    expect(res.json().detail).toContain('text/csv');
  });

  it("another tenant's key does not see the import (404)", async () => {
    const { userId, token } = await uploader();
    expectStatus(await postUpload(t, SLUG, token, 'mine', { body: small(), contentType: 'text/csv' }), 202);
    await waitForUpload(t, tenant.apiKey, userId, SLUG, 'mine');
    const other = await t.createTenant('dexcom-clarity-other');
    expect((await t.call('GET', `/v1/users/${userId}/uploads/${SLUG}/mine`, { key: other.apiKey })).statusCode).toBe(404);
    expect((await t.call('GET', `/v1/users/${userId}/samples?type=blood_glucose&view=all`, { key: other.apiKey })).statusCode).toBe(404);
  });

  const real = realdataPath('cgm', 'dexcom', 'example_export_data.csv');
  it.skipIf(!real)('the real export (example_export_data.csv): every numeric EGV stored and read back, each Low rejected with the reason; sent again, all unchanged', async () => {
    const body = readFileSync(real!);
    const rows = body.toString('utf8').split(/\r?\n/).slice(1).filter(Boolean).map((l) => l.split(',').map((c) => c.replace(/^"|"$/g, '')));
    const numeric = rows.filter((r) => r[2] === 'EGV' && /^\d+(\.\d+)?$/.test(r[7]!));
    const low = rows.filter((r) => r[2] === 'EGV' && r[7] === 'Low');
    const { userId, token } = await uploader();
    const started = Date.now();
    expectStatus(await postUpload(t, SLUG, token, 'real', { body, contentType: 'text/csv' }), 202);
    await waitForUpload(t, tenant.apiKey, userId, SLUG, 'real', 240_000);
    const firstMs = Date.now() - started;
    const u = await outcome(userId, 'real');
    expect(u).toMatchObject({ status: 'done', records: { quantity: numeric.length }, rejected: low.length });
    for (const r of u.rejections) expect(r.reason).toMatch(/^EGV "Low": below the sensor's reporting range/);
    // The first day read back, value for value (no zone named: the local times as UTC).
    const day = numeric.filter((r) => r[1]!.startsWith('2024-06-06'));
    const read = await glucose(userId, '2024-06-06T00:00:00Z', '2024-06-07T00:00:00Z');
    expect(read.map((s) => [s.start_date, s.value])).toEqual(day.map((r) => [`${r[1]}.000Z`, Number(r[7])]));
    expect(read[0]!.metadata).toMatchObject({ timezone_source: 'assumed_utc', original_unit: 'mg/dL' });

    const again = Date.now();
    expectStatus(await postUpload(t, SLUG, token, 'real-again', { body, contentType: 'text/csv' }), 202);
    await waitForUpload(t, tenant.apiKey, userId, SLUG, 'real-again', 240_000);
    expect(await outcome(userId, 'real-again')).toMatchObject({ status: 'done', records: {}, unchanged: numeric.length, rejected: low.length });
    console.log(`example_export_data.csv (${(body.length / 1024 / 1024).toFixed(1)} MiB, ${rows.length} rows): ${numeric.length} blood_glucose, ${low.length} rejected in ${(firstMs / 1000).toFixed(1)} s; again all unchanged in ${((Date.now() - again) / 1000).toFixed(1)} s`);
  });
});
