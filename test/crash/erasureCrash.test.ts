import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../../bench/support/service.js';
import { deviceAForm, requestFor } from '../ingest/uploadHelpers.js';
import { bulkHealthKit, markedHealthConnect, markedHealthKit, markersOf, missingFrom, scanFiles, type Markers } from '../erasure/markedData.js';
import { tempDir } from '../support/tmp.js';

/**
 * Issue acceptance: "SIGKILL during a deletion job and during a provider erasure: both complete
 * after restart". The service runs as `npm start` runs it; each job is killed as soon as the log
 * shows it started and not finished; the restarted service takes it over and finishes it, and
 * then no file under DATA_DIR holds what it erased.
 */
const running: RunningService[] = [];
afterAll(() => {
  for (const s of running) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
});

async function start(dataDir: string): Promise<RunningService> {
  const s = await startService(dataDir);
  running.push(s);
  return s;
}

async function call(s: RunningService, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${key}`, ...headers } };
  if (Buffer.isBuffer(body)) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const res = await fetch(`${s.base}${path}`, init);
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

async function upload(s: RunningService, token: string, slug: 'device-a' | 'device-b', payload: Buffer): Promise<void> {
  const req = slug === 'device-a' ? deviceAForm(payload) : requestFor(slug, payload);
  const res = await call(s, 'POST', `/v1/ingest/${slug}`, token, req.body, { 'content-type': req.contentType, 'upload-id': `crash-${randomUUID()}` });
  expect(res.status, res.text).toBe(202);
}

async function waitFor(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const pendingJobs = async (s: RunningService, key: string, userId: string) => (await call(s, 'GET', `/v1/users/${userId}/coverage?view=all`, key)).json().pending_jobs as number;

/**
 * Watches the log from outside (a read-only connection) and SIGKILLs the service the moment a
 * deletion job of `userId` has started and not finished. Answers the job's id.
 */
async function killDuringJob(dataDir: string, s: RunningService, userId: string, request: () => Promise<unknown>): Promise<string> {
  const log = new Database(join(dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true });
  const unfinished = log.prepare<[string], { stream: string }>(`
    SELECT s.stream FROM events s
    WHERE s.type = 'deletion.started' AND json_extract(s.data, '$.user_id') = ?
      AND NOT EXISTS (SELECT 1 FROM events f WHERE f.stream = s.stream AND f.type = 'deletion.finished')`);
  const exited = new Promise<NodeJS.Signals | null>((resolve) => s.child.once('exit', (_code, signal) => resolve(signal)));
  // The answer may never come: the kill can land before it is sent.
  let answer = 'none yet';
  void request().then(
    (r) => (answer = JSON.stringify(r)),
    (e: unknown) => (answer = String(e)),
  );
  try {
    const until = Date.now() + 60_000;
    for (;;) {
      const row = unfinished.get(userId);
      if (row) {
        s.child.kill('SIGKILL');
        expect(await exited).toBe('SIGKILL');
        // Cut short for real: started, not finished.
        const types = log.prepare<[string], { type: string }>('SELECT type FROM events WHERE stream = ? ORDER BY revision').all(row.stream).map((r) => r.type);
        expect(types).toContain('deletion.started');
        expect(types).not.toContain('deletion.finished');
        return row.stream.slice('deletion-'.length);
      }
      if (Date.now() > until) {
        const all = log.prepare("SELECT stream, type, data FROM events WHERE stream LIKE 'deletion-%' ORDER BY position").all();
        throw new Error(`the deletion job was never seen running (answer: ${answer}, service exit ${s.child.exitCode} ${s.child.signalCode}): ${JSON.stringify(all).slice(0, 3000)}`);
      }
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    log.close();
  }
}

async function finished(s: RunningService, key: string, jobId: string): Promise<Record<string, unknown>> {
  let job: Record<string, unknown> = {};
  await waitFor(`job ${jobId} ends`, async () => {
    job = (await call(s, 'GET', `/v1/deletions/${jobId}`, key)).json();
    return job.status === 'done' || job.status === 'failed';
  });
  return job;
}

describe('a deletion job and a provider erasure cut short by SIGKILL finish after a restart (issue acceptance)', () => {
  it('SIGKILL during a user deletion and during a provider erasure: after each restart the job ends done and nothing it erased is left in any file', { timeout: 240_000 }, async () => {
    const t0 = Date.now();
    const mark = (what: string) => console.log(`[erasure-crash] ${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const dataDir = tempDir('wellstream-erasure-crash-');
    let s = await start(dataDir);
    const tenant = await call(s, 'POST', '/v1/admin/tenants', s.adminKey, { name: 'crash' });
    expect(tenant.status, tenant.text).toBe(201);
    const apiKey = String(tenant.json().api_key);
    const newUser = async () => String((await call(s, 'POST', '/v1/users', apiKey, {})).json().id);
    const tokenOf = async (userId: string) => String((await call(s, 'POST', `/v1/users/${userId}/tokens`, apiKey, { scopes: ['upload'] })).json().token);

    // Enough data that a job takes a while: several thousand samples per user and provider.
    const gone = await newUser();
    const kept = await newUser();
    const marks: Record<string, Markers> = {};
    for (const [userId, tag] of [[gone, 'GONE'], [kept, 'KEPT']] as const) {
      const token = await tokenOf(userId);
      const hk = markedHealthKit(tag);
      const hc = markedHealthConnect(tag);
      await upload(s, token, 'device-a', bulkHealthKit(3000));
      await upload(s, token, 'device-a', hk.payload);
      await upload(s, token, 'device-b', hc.payload);
      marks[`${tag}-a`] = await markersOf('device-a', hk.payload, hk.texts);
      marks[`${tag}-b`] = await markersOf('device-b', hc.payload, hc.texts);
    }
    mark('uploaded');
    for (const u of [gone, kept]) await waitFor('ETL done', async () => (await pendingJobs(s, apiKey, u)) === 0);
    const samples = async (u: string) => ((await call(s, 'GET', `/v1/users/${u}/samples?type=heart_rate&view=all&limit=1000`, apiKey)).json().data as unknown[]).length;
    for (const u of [gone, kept]) await waitFor('records applied', async () => (await samples(u)) === 1000);
    await waitFor('markers applied', async () => missingFrom(dataDir, marks['GONE-a']!).length === 0);

    mark('applied');
    // 1. A user deletion, killed mid-way.
    const userJob = await killDuringJob(dataDir, s, gone, () => call(s, 'DELETE', `/v1/users/${gone}`, apiKey));
    mark('killed during the user deletion');
    s = await start(dataDir);
    mark('restarted');
    expect(await finished(s, apiKey, userJob)).toMatchObject({ status: 'done', user_id: gone, provider: null });
    expect((await call(s, 'GET', `/v1/users/${gone}`, apiKey)).status).toBe(404);
    expect(scanFiles(dataDir, marks['GONE-a']!)).toEqual([]);
    expect(scanFiles(dataDir, marks['GONE-b']!)).toEqual([]);

    // 2. A provider erasure of the other user, killed mid-way.
    const eraseJob = await killDuringJob(dataDir, s, kept, () => call(s, 'DELETE', `/v1/users/${kept}/data/device-a`, apiKey));
    mark('killed during the provider erasure');
    s = await start(dataDir);
    mark('restarted');
    expect(await finished(s, apiKey, eraseJob)).toMatchObject({ status: 'done', user_id: kept, provider: 'device-a' });
    expect(scanFiles(dataDir, marks['KEPT-a']!)).toEqual([]);
    expect(missingFrom(dataDir, marks['KEPT-b']!)).toEqual([]);
    // New data of that provider is accepted again.
    await upload(s, await tokenOf(kept), 'device-a', markedHealthKit('AGAIN', 10).payload);
    await waitFor('ETL done', async () => (await pendingJobs(s, apiKey, kept)) === 0);
    await s.stop();
  });
});
