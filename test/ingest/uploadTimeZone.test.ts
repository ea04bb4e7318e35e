import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipEntries } from '../fixtures/zip/buildZip.js';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { tusRequests } from './tusHelpers.js';
import { postUpload, waitForUpload } from './uploadHelpers.js';

/**
 * contracts §17: an export whose local times carry no offset (a Fitbit Takeout without a profile
 * zone) is read in the zone the uploader names, by `Upload-Time-Zone` on `POST /v1/ingest/{slug}`
 * or the tus `Upload-Metadata` key `tz`; an unknown zone is a 400 and nothing is stored; every
 * record says where its zone came from (`metadata.timezone_source`).
 */
let t: TestApp;
let tenant: TenantHandle;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('upload-time-zone');
});
afterAll(async () => t?.close());

const { create, patch, head } = tusRequests(() => t);

/** Steps of one minute at 08:01 local on a summer day, and no Profile.csv: the export names no zone. */
const takeoutWithoutProfile = () =>
  zipEntries([{ name: 'Takeout/Fitbit/Global Export Data/steps-2024-07-01.json', data: Buffer.from(JSON.stringify([{ dateTime: '07/01/24 08:01:00', value: '95' }])) }]);

async function uploader() {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  return { userId: user.id, token };
}

async function stepsOf(userId: string) {
  const res = await t.call('GET', `/v1/users/${userId}/samples?type=step_count&view=all&start=2024-06-30T00:00:00Z&end=2024-07-03T00:00:00Z`, { key: tenant.apiKey });
  expect(res.statusCode).toBe(200);
  return (res.json() as { data: { start_date: string; value: number; metadata: Record<string, unknown> }[] }).data;
}

async function uploadRow(userId: string, uploadId: string) {
  return t.call('GET', `/v1/users/${userId}/uploads/fitbit-takeout/${uploadId}`, { key: tenant.apiKey });
}

describe('the zone of a zone-less export is the one the uploader names (contracts §17)', { timeout: 60_000 }, () => {
  it('Upload-Time-Zone: Europe/Berlin reads 08:01 local as 06:01 UTC, timezone_source upload', async () => {
    const { userId, token } = await uploader();
    const res = await postUpload(t, 'fitbit-takeout', token, 'berlin', { body: await takeoutWithoutProfile(), contentType: 'application/zip', headers: { 'upload-time-zone': 'europe/berlin' } });
    expect(res.statusCode).toBe(202);
    await waitForUpload(t, tenant.apiKey, userId, 'fitbit-takeout', 'berlin');
    const [steps] = await stepsOf(userId);
    expect(steps).toMatchObject({ start_date: '2024-07-01T06:01:00.000Z', value: 95 });
    // The canonical name, whatever the spelling sent.
    expect(steps!.metadata).toMatchObject({ timezone: 'Europe/Berlin', utc_offset: '+02:00', timezone_source: 'upload' });
  });

  it('tus Upload-Metadata tz=Europe/Berlin reads the same instants', async () => {
    const { userId, token } = await uploader();
    const body = await takeoutWithoutProfile();
    const created = await create(token, body.length, { provider: 'fitbit-takeout', upload_id: 'berlin-tus', tz: 'Europe/Berlin' });
    expect(created.statusCode).toBe(201);
    expect((await patch(token, created.headers.location as string, 0, body)).statusCode).toBe(204);
    await waitForUpload(t, tenant.apiKey, userId, 'fitbit-takeout', 'berlin-tus');
    const [steps] = await stepsOf(userId);
    expect(steps).toMatchObject({ start_date: '2024-07-01T06:01:00.000Z' });
    expect(steps!.metadata).toMatchObject({ timezone: 'Europe/Berlin', timezone_source: 'upload' });
  });

  it('without a zone named or in the export, the times are read as UTC and flagged assumed_utc', async () => {
    const { userId, token } = await uploader();
    expect((await postUpload(t, 'fitbit-takeout', token, 'no-zone', { body: await takeoutWithoutProfile(), contentType: 'application/zip' })).statusCode).toBe(202);
    await waitForUpload(t, tenant.apiKey, userId, 'fitbit-takeout', 'no-zone');
    const [steps] = await stepsOf(userId);
    expect(steps).toMatchObject({ start_date: '2024-07-01T08:01:00.000Z' });
    expect(steps!.metadata).toMatchObject({ timezone_source: 'assumed_utc' });
  });

  it('an unknown Upload-Time-Zone is a 400 problem naming the header, and nothing is stored', async () => {
    const { userId, token } = await uploader();
    for (const zone of ['Mars/Olympus', '+01:00', '']) {
      const res = await postUpload(t, 'fitbit-takeout', token, 'mars', { body: await takeoutWithoutProfile(), contentType: 'application/zip', headers: { 'upload-time-zone': zone } });
      expect(res.statusCode, zone).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json().detail).toMatch(/Upload-Time-Zone must be an IANA time zone/);
    }
    expect((await uploadRow(userId, 'mars')).statusCode).toBe(404);
  });

  it('an unknown tus tz is a 400 at creation, and no upload exists under its id', async () => {
    const { userId, token } = await uploader();
    const res = await create(token, 100, { provider: 'fitbit-takeout', upload_id: 'mars-tus', tz: 'Mars/Olympus' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().detail).toMatch(/Upload-Metadata tz must be an IANA time zone/);
    expect((await head(token, '/v1/uploads/tus/fitbit-takeout/mars-tus')).statusCode).toBe(404);
    expect((await uploadRow(userId, 'mars-tus')).statusCode).toBe(404);
  });

  it("another tenant's key does not see the upload the zone was named for (404)", async () => {
    const { userId, token } = await uploader();
    expect((await postUpload(t, 'fitbit-takeout', token, 'mine', { body: await takeoutWithoutProfile(), contentType: 'application/zip', headers: { 'upload-time-zone': 'Europe/Berlin' } })).statusCode).toBe(202);
    await waitForUpload(t, tenant.apiKey, userId, 'fitbit-takeout', 'mine');
    const other = await t.createTenant('upload-time-zone-other');
    expect((await t.call('GET', `/v1/users/${userId}/uploads/fitbit-takeout/mine`, { key: other.apiKey })).statusCode).toBe(404);
  });
});
