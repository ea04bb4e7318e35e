import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { zipEntries } from '../fixtures/zip/buildZip.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { realdataPath } from '../sources/files/realdata.js';
import { workout } from '../projections/records/fixtures.js';
import { ingest } from '../server/records/recordsHelper.js';
import { tusRequests } from './tusHelpers.js';
import { postUpload, waitForUpload } from './uploadHelpers.js';

/**
 * contracts §20 through the routes: a .fit file by raw POST (its own media type or octets), a zip
 * of them by tus, each with its Upload outcome; the same file again writes nothing; a body that is
 * not a FIT file is refused at the request (§12) and a damaged one ends with its damage named.
 */
const file = (name: string) => realdataPath('fit', name);
const RUN = file('garmin-fenix-5-run.fit');
const EOF_FILE = file('activity-unexpected-eof.fit');
const ALL = ['garmin-fenix-5-bike.fit', 'garmin-fenix-5-walk.fit', 'sample_mulitple_header.fit', 'WeightScaleSingleUser.fit'].map(file);

let t: TestApp;
let tenant: TenantHandle;
const tus = tusRequests(() => t);

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('fit');
});
afterAll(async () => {
  await t?.close();
});

async function userWithToken() {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  return { user, token };
}
const uploadOf = async (userId: string, id: string) => (await t.call('GET', `/v1/users/${userId}/uploads/fit/${id}`, { key: tenant.apiKey })).json() as UploadResource;

describe('fit imports through the routes (contracts §20)', { timeout: 120_000 }, () => {
  it.skipIf(RUN && EOF_FILE && ALL.every(Boolean))('skipped: ../shared/realdata/fit is absent', () => {});

  it.skipIf(!RUN)('a .fit file sent as application/vnd.ant.fit is done with its workout and heart rate; sent again it writes nothing (unchanged)', async () => {
    const { user, token } = await userWithToken();
    const body = readFileSync(RUN!);
    expectStatus(await postUpload(t, 'fit', token, 'run-1', { body, contentType: 'application/vnd.ant.fit' }), 202);
    await waitForUpload(t, tenant.apiKey, user.id, 'fit', 'run-1');
    const first = await uploadOf(user.id, 'run-1');
    expect(first).toMatchObject({ status: 'done', rejected: 0, unchanged: 0 });
    expect(first.records).toMatchObject({ workout: 1 });
    const stored = Object.values(first.records).reduce((a, b) => a + b, 0);

    expectStatus(await postUpload(t, 'fit', token, 'run-2', { body, contentType: 'application/octet-stream' }), 202);
    await waitForUpload(t, tenant.apiKey, user.id, 'fit', 'run-2');
    expect(await uploadOf(user.id, 'run-2')).toMatchObject({ status: 'done', records: {}, unchanged: stored, rejected: 0 });

    // What the console's workout page reads (its route map takes any provider's route).
    const workouts = (await t.call('GET', `/v1/users/${user.id}/workouts`, { key: tenant.apiKey })).json() as { data: { id: number; type: string; track: unknown; provider: string }[] };
    expect(workouts.data.map((w) => [w.type, w.provider])).toEqual([['running', 'fit']]);
    expect(workouts.data[0]!.track).not.toBeNull();
    const route = (await t.call('GET', `/v1/users/${user.id}/workouts/${workouts.data[0]!.id}/route`, { key: tenant.apiKey })).json() as { data: unknown[] };
    expect(route.data.length).toBeGreaterThan(0);
  });

  it.skipIf(!RUN)('the same run from a provider (Strava) and from its FIT file is one workout in the merged view, the FIT one by the workouts order (contracts §20)', async () => {
    const { user, token } = await userWithToken();
    expectStatus(await postUpload(t, 'fit', token, 'merge', { body: readFileSync(RUN!), contentType: 'application/vnd.ant.fit' }), 202);
    await waitForUpload(t, tenant.apiKey, user.id, 'fit', 'merge');
    const fromStrava = workout({ provider: 'strava', source: 'strava', device: null, external_id: 'strava-1', type: 'running', start_date: '2017-06-11T14:34:09.000Z', end_date: '2017-06-11T14:35:06.000Z', duration_s: 57, route: [] });
    await ingest(t, tenant.id, user.id, 'workout', [fromStrava], 'strava');
    const list = async (view: string) => ((await t.call('GET', `/v1/users/${user.id}/workouts`, { key: tenant.apiKey, query: { view } })).json() as { data: { provider: string }[] }).data.map((w) => w.provider).sort();
    expect(await list('all')).toEqual(['fit', 'strava']);
    expect(await list('merged')).toEqual(['fit']);
  });

  it.skipIf(!ALL.every(Boolean))('a zip of .fit files by tus is done with every file\'s records', async () => {
    const { user, token } = await userWithToken();
    const zip = await zipEntries(ALL.map((p, i) => ({ name: `export/${i}.fit`, data: readFileSync(p!) })));
    const created = await tus.create(token, zip.length, { provider: 'fit', upload_id: 'zip-1' });
    expect(created.statusCode).toBe(201);
    const location = created.headers.location as string;
    expect((await tus.patch(token, location, 0, zip)).statusCode).toBe(204);
    await waitForUpload(t, tenant.apiKey, user.id, 'fit', 'zip-1');
    const u = await uploadOf(user.id, 'zip-1');
    expect(u.status).toBe('done');
    expect(u.records).toMatchObject({ workout: 7 });
  });

  it.skipIf(!EOF_FILE)('a cut-off file is done with what comes before the damage and one rejection naming the byte offset', async () => {
    const { user, token } = await userWithToken();
    expectStatus(await postUpload(t, 'fit', token, 'eof', { body: readFileSync(EOF_FILE!), contentType: 'application/vnd.ant.fit' }), 202);
    await waitForUpload(t, tenant.apiKey, user.id, 'fit', 'eof');
    const u = await uploadOf(user.id, 'eof');
    expect(u).toMatchObject({ status: 'done', rejected: 1, records: { workout: 1 } });
    expect(u.rejections[0]).toMatchObject({ at: 'the file byte 751', reason: expect.stringMatching(/cut off/) });
  });

  it('a body that is neither a FIT file nor a zip is refused at the request (422) and nothing is kept', async () => {
    const { user, token } = await userWithToken();
    const res = await postUpload(t, 'fit', token, 'text', { body: Buffer.from('date,steps\n2024-01-01,100\n'), contentType: 'application/vnd.ant.fit' });
    expectStatus(res, 422);
    expect(res.json().detail).toMatch(/neither a FIT file .* nor a zip archive/);
    expect((await t.call('GET', `/v1/users/${user.id}/uploads/fit/text`, { key: tenant.apiKey })).statusCode).toBe(404);
  });

  it('a body of another media type is 415 naming the FIT type among those accepted (contracts §12)', async () => {
    const { token } = await userWithToken();
    const res = await postUpload(t, 'fit', token, 'csv', { body: Buffer.from('a,b\n'), contentType: 'text/csv' });
    expectStatus(res, 415);
    expect(res.json().detail).toContain('application/vnd.ant.fit');
  });

  it.skipIf(!RUN)("another tenant's key does not see the user's FIT upload (404)", async () => {
    const { user, token } = await userWithToken();
    expectStatus(await postUpload(t, 'fit', token, 'mine', { body: readFileSync(RUN!), contentType: 'application/vnd.ant.fit' }), 202);
    const other = await t.createTenant('fit-other');
    expect((await t.call('GET', `/v1/users/${user.id}/uploads/fit/mine`, { key: other.apiKey })).statusCode).toBe(404);
    await waitForUpload(t, tenant.apiKey, user.id, 'fit', 'mine');
  });
});
