import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadResource } from '../../../queries/ingestion/uploads.js';
import { ORPHAN_MARGIN_MS, tusSweep } from '../../../src/processes/uploads/tusSweep.js';
import { uploadStream } from '../../../commands/ingestion/upload.js';
import { uploadLockName, uploadLocksOf } from '../../../src/processes/uploads/uploadLocks.js';
import { stagingRoot, UploadStaging } from '../../../src/rawstore/uploadStaging.js';
import { expectProblem, startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';
import { tempDir } from '../../support/tmp.js';
import { tusRequests } from '../../ingest/tusHelpers.js';

/**
 * Issue 21, tus hygiene: resumable uploads never completed are abandoned and their staged bytes
 * removed by a bounded background sweep once expired (contracts §13, tus expiration), not only
 * when someone next asks for them. The sweep's clock is passed in: expiry is a value, never a wait.
 */
const HOUR = 3_600_000;
const EXPIRY_HOURS = 2;
let t: TestApp;
let tenant: TenantHandle;
beforeAll(async () => {
  t = await startTestApp({ IMPORT_UPLOAD_EXPIRY_HOURS: String(EXPIRY_HOURS) });
  tenant = await t.createTenant('tus-sweep');
});
afterAll(async () => t?.close());

const { create, patch, head } = tusRequests(() => t);
const ZIP_START = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const staging = () => new UploadStaging(stagingRoot(t.dataDir));
const sweep = () => tusSweep({ eventStore: t.ctx.eventStore, readStore: t.ctx.readStore, staging: staging(), locks: uploadLocksOf(t.ctx.readStore, t.ctx.config.leases), expiryMs: EXPIRY_HOURS * HOUR });
const stagedOf = (userId: string) => (existsSync(join(t.dataDir, 'tus', userId)) ? readdirSync(join(t.dataDir, 'tus', userId)) : []);

async function receiving(uploadId: string) {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  const location = (await create(token, 200_000, { provider: 'fitbit-takeout', upload_id: uploadId })).headers.location as string;
  expect((await patch(token, location, 0, Buffer.concat([ZIP_START, Buffer.alloc(80_000, 1)]))).statusCode).toBe(204);
  return { userId: user.id, token, location };
}

describe('the sweep of expired resumable uploads (issue 21; contracts §13 tus expiration)', { timeout: 120_000 }, () => {
  it('abandons an upload past its expiry and removes its staged bytes: the row leaves the list, HEAD is 410; an upload not yet expired is left alone', async () => {
    const old = await receiving('old');
    expect(stagedOf(old.userId)).toHaveLength(1);
    const run = sweep();

    // Before the expiry nothing changes.
    expect(await run.run(Date.now() + EXPIRY_HOURS * HOUR - 60_000)).toMatchObject({ expired: 0 });
    expect(stagedOf(old.userId)).toHaveLength(1);

    const later = Date.now() + EXPIRY_HOURS * HOUR + 60 * 60_000;
    expect(await run.run(later)).toEqual({ expired: 1, orphans: 0 });
    expect(stagedOf(old.userId)).toEqual([]);
    expect((await head(old.token, old.location)).statusCode).toBe(410);
    await t.ctx.settle(undefined, ['uploads']);
    expectProblem(await t.call('GET', `/v1/users/${old.userId}/uploads/fitbit-takeout/old`, { key: tenant.apiKey }), 404);
    // A second round has nothing left.
    expect(await run.run(later)).toEqual({ expired: 0, orphans: 0 });
  });

  it('leaves an upload whose bytes are still arriving (a PATCH begun before its expiry) to a later round', async () => {
    const live = await receiving('live');
    // Just past its expiry, its last bytes a moment ago: a long PATCH may still be running.
    const justExpired = Date.now() + EXPIRY_HOURS * HOUR + 1_000;
    // Bytes arrived a second before that moment (the sweep's clock is the test's; the files' times follow it).
    const arrived = new Date(justExpired - 1_000);
    const dir = join(stagingRoot(t.dataDir), live.userId, stagedOf(live.userId)[0]!);
    for (const p of [join(dir, 'chunks'), join(dir, 'tail'), dir]) if (existsSync(p)) utimesSync(p, arrived, arrived);
    const run = sweep();
    expect(await run.run(justExpired)).toMatchObject({ expired: 0 });
    expect(stagedOf(live.userId)).toHaveLength(1);
    const u = (await t.call('GET', `/v1/users/${live.userId}/uploads/fitbit-takeout/live`, { key: tenant.apiKey })).json() as UploadResource;
    expect(u.status).toBe('receiving');
    // Once nothing arrived for long enough, it goes.
    expect(await run.run(justExpired + 11 * 60_000)).toMatchObject({ expired: 1 });
    expect(stagedOf(live.userId)).toEqual([]);
  });

  it('issue 34 §6: leaves an expired upload whose lock a request holds (a PATCH, a DELETE or an acceptance in any process) to a later round', async () => {
    const held = await receiving('held');
    const locks = uploadLocksOf(t.ctx.readStore, t.ctx.config.leases);
    const lock = await locks.take(uploadLockName(uploadStream(held.userId, 'fitbit-takeout', 'held')));
    expect(lock).not.toBeNull();
    const later = Date.now() + EXPIRY_HOURS * HOUR + 60 * 60_000;
    const run = sweep();
    try {
      expect(await run.run(later)).toMatchObject({ expired: 0 });
      expect(stagedOf(held.userId)).toHaveLength(1);
    } finally {
      await lock!.release();
    }
    expect(await run.run(later)).toMatchObject({ expired: 1 });
    expect(stagedOf(held.userId)).toEqual([]);
  });

  it('removes staged folders no upload can finish (left by a crash, or of a deleted user) once older than the expiry and a margin; newer ones stay', async () => {
    const root = stagingRoot(t.dataDir);
    const now = Date.now();
    const orphan = join(root, 'gone-user', 'a'.repeat(32));
    const recent = join(root, 'other-user', 'b'.repeat(32));
    for (const dir of [orphan, recent]) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'chunks'), Buffer.alloc(10));
    }
    const old = new Date(now - EXPIRY_HOURS * HOUR - ORPHAN_MARGIN_MS - 60_000);
    for (const p of [join(orphan, 'chunks'), orphan]) utimesSync(p, old, old);
    const result = await sweep().run(now);
    expect(result.orphans).toBe(1);
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    // The emptied user folder goes at the next walk.
    await sweep().run(now);
    expect(existsSync(join(root, 'gone-user'))).toBe(false);
  });
});

describe('UploadStaging.walk: the sweep looks at a bounded number of folders per round', () => {
  it('hands out every folder exactly once over rounds of at most `limit`', async () => {
    const root = tempDir('wellstream-walk-');
    for (const u of ['u1', 'u2', 'u3']) for (const d of ['x', 'y']) mkdirSync(join(root, u, d), { recursive: true });
    const s = new UploadStaging(root);
    const seen: string[] = [];
    for (let skip = 0; skip < 8; skip += 4) {
      const round: string[] = [];
      for await (const dir of s.walk(skip, 4)) round.push(dir.path);
      expect(round.length).toBeLessThanOrEqual(4);
      seen.push(...round);
    }
    expect(seen.sort()).toEqual(['u1', 'u2', 'u3'].flatMap((u) => ['x', 'y'].map((d) => join(root, u, d))).sort());
  });
});
