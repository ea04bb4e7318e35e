import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { uploadStream } from '../../commands/ingestion/upload.js';
import { tusUpload } from '../../src/cli/tusClient.js';
import { uploadLockName, uploadLocksOf } from '../../src/processes/uploads/uploadLocks.js';
import { startTestApp, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';
import { until } from '../support/until.js';

/**
 * The CLI's tus client (`npm run cli -- import`) against an upload another request holds
 * (issue 34 §6: 423 Locked): it waits and goes on, as for a 409, instead of giving up.
 */
let t: TestApp;
let origin: string;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => t?.close());

describe('the CLI tus client (issue 34 §6)', { timeout: 120_000 }, () => {
  it('a PATCH answered 423 (the upload held by another request) is retried once the lock is gone, and the upload completes', async () => {
    const tenant = await t.createTenant('tus-cli');
    const user = await t.createUser(tenant.apiKey);
    const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
    const path = join(tempDir('wellstream-tus-cli-'), 'export.zip');
    const body = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(70_000, 3)]);
    writeFileSync(path, body);
    // Another request holds the upload before the client's first PATCH.
    const lock = await uploadLocksOf(t.ctx.readStore, t.ctx.config.leases).take(uploadLockName(uploadStream(user.id, 'fitbit-takeout', 'held')));
    expect(lock).not.toBeNull();
    const statuses: number[] = [];
    const realFetch = globalThis.fetch;
    const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (...args: Parameters<typeof fetch>) => {
      const res = await realFetch(...args);
      if ((args[1]?.method ?? 'GET') === 'PATCH') statuses.push(res.status);
      return res;
    });
    try {
      const done = tusUpload({ origin, token, path, size: body.length, metadata: { provider: 'fitbit-takeout', upload_id: 'held' } }, () => {});
      const outcome = done.then(() => 'done', (err: Error) => err.message);
      await until('a PATCH answered 423', Date.now() + 60_000, async () => statuses.includes(423) || (await Promise.race([outcome, Promise.resolve(undefined)])) !== undefined);
      await lock!.release();
      expect(await outcome).toBe('done');
      expect(statuses[0]).toBe(423);
      expect(statuses.at(-1)).toBe(204);
    } finally {
      spy.mockRestore();
      await lock?.release();
    }
  });
});
