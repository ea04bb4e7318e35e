import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/app/context.js';
import { loadConfig } from '../../src/config.js';
import { importTempDir } from '../../src/processes/etl/etlTask.js';
import { appleHealthDecoder } from '../../src/sources/files/apple-health/appleHealthDecoder.js';
import { bufferByteSource } from '../../src/sources/files/exportShared/byteSources.js';
import { temporaryFilePath } from '../../src/sources/files/exportShared/temporaryFile.js';
import { exportXml, gzip, zipOf } from '../sources/files/apple-health/exportFixtures.js';
import { startTestApp, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';

/**
 * Issue 34 §7 (contracts §18, §19): a decoder's plaintext copy of an upload (the decompressed
 * gzip of an Apple export.zip, Health Connect's database) that a killed run left behind is
 * removed at start-up and by its user's erasure.
 */

/**
 * Runs the Apple decoder on a gzipped export.zip for `userId` until its first item, then leaves
 * it there, as a worker killed mid-import would: the copy it made is still on disk.
 */
async function killedAppleImport(dir: string, userId: string): Promise<string[]> {
  const record = '<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-03-01 08:00:00 +0100" endDate="2024-03-01 08:10:00 +0100" value="120"/>';
  const body = gzip(await zipOf({ 'apple_health_export/export.xml': exportXml(record) }));
  const items = appleHealthDecoder({ tempDir: dir }).decode(bufferByteSource(body), { provider: 'apple-health', receivedAt: '2026-11-01T00:00:00.000Z', dataType: null, userId });
  const first = await items[Symbol.asyncIterator]().next();
  expect(first.done).toBe(false);
  return readdirSync(dir);
}

describe('contracts §18 (issue 34 §7): plaintext spill files do not outlive a killed run', () => {
  it('removes at start-up what a killed import left, the Apple decoder’s copies and the older apple-health-* folders alike', async () => {
    const dataDir = tempDir('wellstream-spill-');
    const dir = importTempDir(dataDir);
    mkdirSync(dir, { recursive: true });
    const left = await killedAppleImport(dir, 'user-1');
    expect(left).toHaveLength(1);
    mkdirSync(join(dir, 'apple-health-AbC123'));
    writeFileSync(join(dir, 'apple-health-AbC123', 'export.zip'), 'plaintext');
    writeFileSync(join(dir, 'notes.txt'), 'not a copy');

    const ctx = await createContext(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv));
    await ctx.close();
    expect(readdirSync(dir)).toEqual(['notes.txt']);
  });

  describe('erasure', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(async () => {
      await t?.close();
    });

    it("a user's erasure removes the copies of that user's uploads, and no one else's", async () => {
      const tenant = await t.createTenant();
      const victim = await t.createUser(tenant.apiKey);
      const bystander = await t.createUser(tenant.apiKey);
      const dir = importTempDir(t.dataDir);
      mkdirSync(dir, { recursive: true });
      const [appleCopy] = await killedAppleImport(dir, victim.id);
      const dbCopy = temporaryFilePath(dir, { userId: victim.id, provider: 'health-connect' }, '.db');
      const theirs = temporaryFilePath(dir, { userId: bystander.id, provider: 'apple-health' }, '-export.zip');
      for (const p of [dbCopy, `${dbCopy}-journal`, theirs]) writeFileSync(p, 'plaintext');

      const job = await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, victim.id));
      expect(job.status).toBe('done');
      expect(existsSync(join(dir, appleCopy!))).toBe(false);
      expect(existsSync(dbCopy)).toBe(false);
      expect(existsSync(`${dbCopy}-journal`)).toBe(false);
      expect(existsSync(theirs)).toBe(true);
    });
  });
});
