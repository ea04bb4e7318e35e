import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { filesUnder, zipEntries } from '../fixtures/zip/buildZip.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { realdataPath } from '../sources/files/realdata.js';
import { postUpload, waitForUpload } from './uploadHelpers.js';
import { exportXml, zipOf } from '../sources/files/apple-health/exportFixtures.js';

/**
 * Issue 21 acceptance: every file in ../shared/realdata that is one of the import formats goes
 * through the routes (POST /v1/ingest/{slug}, the raw store, the ETL) with plausible results.
 * Exports kept as folders are zipped here as their app would hold them (nothing is copied into
 * the repository). Each is then sent again under another Upload-Id, which must write nothing and
 * count every record in `unchanged`. Prints one table row per file: records per kind, rejected
 * with reasons, time, and the second upload's outcome and time.
 */

type Case = { name: string; slug: string; body: () => Promise<Buffer>; type: string };

function cases(): Case[] {
  const out: Case[] = [];
  const healthkit = realdataPath('healthkit');
  if (healthkit) {
    for (const f of readdirSync(healthkit).filter((f) => f.endsWith('.xml') && !f.endsWith('_cda.xml')).sort()) {
      out.push({ name: `healthkit/${f}`, slug: 'apple-health', type: 'application/xml', body: async () => readFileSync(join(healthkit, f)) });
    }
  }
  // A whole export as the Health app zips it: export.xml beside export_cda.xml, which is ignored (contracts §13).
  const xml = realdataPath('healthkit', 'rgosdin_docs_export.xml');
  const cda = realdataPath('healthkit', 'rgosdin_docs_export_cda.xml');
  if (xml && cda) {
    out.push({
      name: 'healthkit/rgosdin_docs_export.xml + rgosdin_docs_export_cda.xml (in one export.zip)',
      slug: 'apple-health',
      type: 'application/zip',
      body: () => zipOf({ 'apple_health_export/export.xml': readFileSync(xml), 'apple_health_export/export_cda.xml': readFileSync(cda) }),
    });
  }
  // Element fragments with their GPX routes: put in one export.zip as the Health app writes it.
  const fixtures = realdataPath('apple-health', 'reyrolle_fixtures');
  if (fixtures) {
    out.push({
      name: 'apple-health/reyrolle_fixtures/*.xml + workout-routes (in one export.zip)',
      slug: 'apple-health',
      type: 'application/zip',
      body: async () => {
        const xml = readdirSync(fixtures).filter((f) => f.endsWith('.xml')).sort().map((f) => readFileSync(join(fixtures, f), 'utf8')).join('\n');
        const entries: Record<string, Buffer | string> = { 'apple_health_export/export.xml': exportXml(xml) };
        for (const f of readdirSync(join(fixtures, 'workout-routes'))) entries[`apple_health_export/workout-routes/${f}`] = readFileSync(join(fixtures, 'workout-routes', f));
        const ecg = realdataPath('apple-health', 'heartphase_ecg', 'ecg-sample.csv');
        if (ecg) entries['apple_health_export/electrocardiograms/ecg_2024-01-01.csv'] = readFileSync(ecg);
        return zipOf(entries);
      },
    });
  }
  for (const [dir, prefix] of [['rlo879_takeout', ''], ['fitport_user-site-export', 'MyFitbitData/user-site-export/'], ['bg_control_fitness', 'Takeout/Fitbit/']] as const) {
    const path = realdataPath('fitbit', dir);
    if (path) out.push({ name: `fitbit/${dir} (zipped)`, slug: 'fitbit-takeout', type: 'application/zip', body: () => zipEntries(filesUnder(path, prefix)) });
  }
  for (const dir of ['gustavo-utpott', 'vnegi10']) {
    const path = realdataPath('samsung-health', dir);
    if (path) out.push({ name: `samsung-health/${dir} (zipped)`, slug: 'samsung-health', type: 'application/zip', body: () => zipEntries(filesUnder(path, 'samsunghealth_user_20231006175776/')) });
  }
  return out;
}

let t: TestApp;
let tenant: TenantHandle;
const rows: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('realdata');
});
afterAll(async () => {
  if (rows.length) {
    const header = '| file | slug | status | records per kind | rejected (reasons) | time | again: written / unchanged | time again |';
    console.log([header, '|---|---|---|---|---|---|---|---|', ...rows].join('\n'));
  }
  await t?.close();
});

const all = cases();

describe('the real exports through the routes (issue 21 acceptance)', { timeout: 300_000 }, () => {
  it.skipIf(all.length === 0)('skipped: ../shared/realdata is absent', () => {});
  for (const c of all) {
    it(`${c.name} imports as ${c.slug}: done, records stored, every rejection with a reason`, async () => {
      const user = await t.createUser(tenant.apiKey);
      const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
      const started = Date.now();
      expectStatus(await postUpload(t, c.slug, token, 'realdata', { body: await c.body(), contentType: c.type }), 202);
      await waitForUpload(t, tenant.apiKey, user.id, c.slug, 'realdata', 240_000);
      const u = (await t.call('GET', `/v1/users/${user.id}/uploads/${c.slug}/realdata`, { key: tenant.apiKey })).json() as UploadResource;
      const ms = Date.now() - started;
      const reasons = [...new Set(u.rejections.map((r) => r.reason.replace(/\d+/g, 'N')))].slice(0, 3).join('; ');
      expect(u.status).toBe('done');
      const stored = Object.values(u.records).reduce((a, b) => a + b, 0);
      expect(stored + u.rejected).toBeGreaterThan(0);
      for (const r of u.rejections) expect(r.reason.length).toBeGreaterThan(0);

      // The same export again under another Upload-Id: nothing written, every record unchanged (contracts §13).
      const again = Date.now();
      expectStatus(await postUpload(t, c.slug, token, 'realdata-again', { body: await c.body(), contentType: c.type }), 202);
      await waitForUpload(t, tenant.apiKey, user.id, c.slug, 'realdata-again', 240_000);
      const r = (await t.call('GET', `/v1/users/${user.id}/uploads/${c.slug}/realdata-again`, { key: tenant.apiKey })).json() as UploadResource;
      const againMs = Date.now() - again;
      rows.push(
        `| ${c.name} | ${c.slug} | ${u.status} | ${Object.entries(u.records).map(([k, n]) => `${k} ${n}`).join(', ')} | ${u.rejected}${reasons ? ` (${reasons})` : ''} | ${(ms / 1000).toFixed(1)} s | ${Object.values(r.records).reduce((a, b) => a + b, 0)} / ${r.unchanged} | ${(againMs / 1000).toFixed(1)} s |`,
      );
      expect(r).toMatchObject({ status: 'done', records: {}, unchanged: stored, rejected: u.rejected });
    });
  }
});
