import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { startService, type RunningService } from '../../bench/support/service.js';
import { tempDir } from '../support/tmp.js';
import { exportXml, zipOf } from '../sources/files/apple-health/exportFixtures.js';
import { sleep } from './uploadHelpers.js';

/**
 * Issue 21 target: "a SIGKILL of the service mid-import loses and duplicates nothing after restart".
 * The service is started as `npm start` starts it, an Apple export of RECORDS heart rates is
 * imported, the service is killed with SIGKILL once the import has passed its first checkpoint and
 * before it ends, and started again on the same DATA_DIR. The import must then end `done` with
 * every record stored once, and the events stored before the kill kept where they were.
 */

const RECORDS = 30_000;
const services: RunningService[] = [];
afterAll(() => {
  for (const s of services) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
});

async function exportZip(): Promise<Buffer> {
  const rows = Array.from({ length: RECORDS }, (_, i) => {
    const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000');
    return `<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="${at}" startDate="${at}" endDate="${at}" value="${50 + (i % 60)}"/>`;
  });
  return zipOf({ 'apple_health_export/export.xml': exportXml(rows.join('\n')) });
}

const http = async (base: string, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined && !Buffer.isBuffer(body) ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as Record<string, unknown> };
};

describe('a crash mid-import (issue 21; contracts §13: resumes after a crash from its last checkpoint)', () => {
  it(
    'SIGKILLed after a checkpoint and before the end, the restarted service finishes the import: done, every record once, the events stored before the kill kept',
    async () => {
      const dataDir = tempDir('wellstream-import-crash-');
      let s = await startService(dataDir, { ETL_CONCURRENCY: '1' });
      services.push(s);
      const tenant = await http(s.base, 'POST', '/v1/admin/tenants', s.adminKey, { name: 'crash' });
      const apiKey = String(tenant.json.api_key);
      const userId = String((await http(s.base, 'POST', '/v1/users', apiKey, {})).json.id);
      const token = String((await http(s.base, 'POST', `/v1/users/${userId}/tokens`, apiKey, { scopes: ['upload'] })).json.token);
      const body = await exportZip();
      const res = await http(s.base, 'POST', '/v1/ingest/apple-health', token, body, { 'content-type': 'application/zip', 'upload-id': 'big-export' });
      expect(res.status).toBe(202);

      const watcher = new Database(join(dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true });
      const progress = watcher.prepare<[], { stream: string; revision: number }>("SELECT stream, revision FROM events WHERE type = 'import.progress' ORDER BY revision DESC LIMIT 1");
      const finished = watcher.prepare<[], { n: number }>("SELECT count(*) AS n FROM events WHERE type = 'etl.job_succeeded'");
      let ingest: string | null = null;
      const until = Date.now() + 120_000;
      while (!ingest) {
        const row = progress.get();
        if (row) {
          s.child.kill('SIGKILL');
          ingest = row.stream;
          break;
        }
        if (Date.now() > until) throw new Error('no checkpoint of the import in 120 s');
        await sleep(5);
      }
      await new Promise<void>((resolve) => (s.child.exitCode !== null || s.child.signalCode !== null ? resolve() : s.child.once('exit', () => resolve())));
      expect(finished.get()!.n).toBe(0);
      const before = watcher.prepare<[string], { id: string; revision: number }>('SELECT id, revision FROM events WHERE stream = ? ORDER BY revision').all(ingest);
      expect(before.length).toBeGreaterThan(0);
      watcher.close();

      s = await startService(dataDir, { ETL_CONCURRENCY: '1' });
      services.push(s);
      let upload: UploadResource;
      const deadline = Date.now() + 180_000;
      for (;;) {
        upload = (await http(s.base, 'GET', `/v1/users/${userId}/uploads/apple-health/big-export`, apiKey)).json as unknown as UploadResource;
        if (upload.status === 'done' || upload.status === 'failed' || upload.status === 'parked') break;
        if (Date.now() > deadline) throw new Error(`the import did not end after the restart: ${JSON.stringify(upload)}`);
        await sleep(250);
      }
      await s.stop();
      expect(upload.status).toBe('done');
      expect(upload.records).toEqual({ quantity: RECORDS });
      expect(upload.rejected).toBe(0);

      const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true });
      const after = db.prepare<[string], { id: string; revision: number; type: string }>('SELECT id, revision, type FROM events WHERE stream = ? ORDER BY revision').all(ingest);
      db.close();
      // What was stored before the kill is still there, at the same revisions; nothing was appended twice.
      expect(after.slice(0, before.length).map(({ id, revision }) => ({ id, revision }))).toEqual(before);
      expect(new Set(after.map((e) => e.id)).size).toBe(after.length);
      // One checkpoint per 10,000 items, none written twice. With the record ledger a checkpoint is
      // taken where the next block begins (docs/record-blocks.md), so none falls at the very end:
      // the one due after the last item is the end itself.
      expect(after.filter((e) => e.type === 'import.progress').length).toBe(Math.ceil(RECORDS / 10_000) - 1);
    },
    420_000,
  );
});
