import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { httpCall } from '../support/httpCall.js';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_RECORDS_PER_EVENT } from '../../commands/ingestion/records.js';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { loadConfig } from '../../src/config.js';
import { dataKeysOf } from '../../src/app/dataKeysOf.js';
import { EventOpener } from '../../src/crypto/recordSealing.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { decodeBlock, SAMPLE_BLOCKS, type SampleBlockDoc } from '../../projections/records/sampleBlocks/sampleBlock.js';
import { tempDir } from '../support/tmp.js';
import { deviceAForm, fixtureB, parsePayload, sleep, type Coverage } from './uploadHelpers.js';
import { freePort, npmStartArgs } from '../../bench/support/service.js';

/**
 * Issue acceptance: "Kill the service during ETL: after restart every accepted upload is fully
 * normalised exactly once."
 *
 * The real service is started as `npm start` starts it (scripts/start.mjs, the compiled service on the
 * embedded SQLite default under a temporary DATA_DIR), fed device uploads over HTTP (contracts.md
 * §3), killed with SIGKILL between two appends of one ETL job (its ingest stream holds some of
 * its events, not all), and started again on the same DATA_DIR, with two ETL threads. Then every
 * accepted upload's job must be done (none parked), every record stored once in the read models
 * and in the event log, no batch of any job appended twice, and the job cut short must have kept
 * the events it had stored and continued after them.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const UPLOADS = 5;
/**
 * Twelve record batches a job (MAX_RECORDS_PER_EVENT records each): enough appends for a kill to land
 * between two of them (the watcher below waits for a job holding 1 to 10 of its events). It was
 * 40,000 (40 appends a job, 200,000 samples): the same rule at 3.3 times the suite's time (docs/decisions.md,
 * "The test suite's time").
 */
const LINES_PER_UPLOAD = 12_000;
/** A device-a job appends at least this many events (more when the size limit cuts before the record limit). */
const MIN_EVENTS_PER_JOB = LINES_PER_UPLOAD / MAX_RECORDS_PER_EVENT;
const ADMIN_KEY = `svc_ak_${'Ab3'.repeat(14)}x`;

/** An uppercase UUID (as HKObject.uuid prints it) with the upload and line number readable at its end. */
const uuidOf = (upload: number, line: number) => `C4A5E0D1-7B2F-4E3A-9C1D-${(upload * 1_000_000 + line).toString(16).toUpperCase().padStart(12, '0')}`;

/** A device-a export of `lines` heart-rate samples with distinct uuids and times (contracts §3 line shape). */
function heartRateExport(upload: number, lines: number): Buffer {
  const start = Date.UTC(2026, 9, 1) + upload * lines * 10_000;
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const at = new Date(start + i * 10_000).toISOString().replace('.000Z', 'Z');
    out.push(
      JSON.stringify({
        kind: 'quantity',
        uuid: uuidOf(upload, i),
        type: 'HKQuantityTypeIdentifierHeartRate',
        value: 50 + ((i * 7) % 90),
        unit: 'count/min',
        start_date: at,
        end_date: at,
        source_name: 'Apple Watch',
        source_bundle_id: 'com.apple.health.1A2B',
        device_model: 'Watch',
        product_type: 'Watch7,1',
        was_user_entered: false,
        metadata: { HKTimeZone: 'Europe/Berlin' },
      }),
    );
  }
  return gzipSync(out.join('\n'));
}


type Service = { child: ChildProcess; base: string; stderr: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> };
const started: ChildProcess[] = [];

/** `npm start` on DATA_DIR: waits until the listener answers. */
async function startService(dataDir: string, extraEnv: Record<string, string> = {}): Promise<Service> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ADMIN_API_KEY: ADMIN_KEY, ...extraEnv };
  delete env.EVENTSTORE_URL;
  delete env.MONGODB_URL;
  const child = spawn(process.execPath, npmStartArgs(), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const base = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`service exited at start: ${stderr}`);
    try {
      const res = await fetch(`${base}/openapi.yaml`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error(`service did not start in 60 s: ${stderr}`);
    await sleep(100);
  }
  return { child, base, stderr: () => stderr, exited };
}

const call = (s: Service, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) =>
  httpCall(s.base, method, path, key, body, headers);

async function coverageOf(s: Service, apiKey: string, userId: string): Promise<Coverage> {
  const res = await call(s, 'GET', `/v1/users/${userId}/coverage?view=all`, apiKey);
  expect(res.status, res.text).toBe(200);
  return res.json() as unknown as Coverage;
}
const totalRecords = (c: Coverage) => c.days.reduce((n, d) => n + d.records, 0);
const metricTotal = (c: Coverage, provider: string, metric: string) => c.days.filter((d) => d.provider === provider).reduce((n, d) => n + (d.metrics[metric] ?? 0), 0);

async function readEverything(store: SqliteEventStore): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  for (;;) {
    const page = await store.readAll({ after: all.at(-1)?.globalPosition ?? 0, maxCount: 1000 });
    if (page.length === 0) return all;
    all.push(...page);
  }
}

afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

describe('a crash during ETL (issue acceptance; spec ETL job; contracts §3: the raw upload is stored durably before the answer, normalisation runs afterwards)', () => {
  it(
    'SIGKILLed between two appends of one ETL job, the restarted service normalises every accepted upload fully and exactly once: all jobs done, none parked, one record per uuid, no batch appended twice, the cut job continued after the events it had stored',
    async () => {
      const t0 = Date.now();
      const timeline: string[] = [];
      const mark = (what: string) => timeline.push(`${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      const dataDir = tempDir('wellstream-etl-crash-');
      let s = await startService(dataDir);

      // Out-of-band set-up over HTTP (contracts §2), a user and an upload token.
      const tenantRes = await call(s, 'POST', '/v1/admin/tenants', ADMIN_KEY, { name: 'crash' });
      expect(tenantRes.status, tenantRes.text).toBe(201);
      const apiKey = String(tenantRes.json().api_key);
      const userRes = await call(s, 'POST', '/v1/users', apiKey, {});
      expect(userRes.status, userRes.text).toBe(201);
      const userId = String(userRes.json().id);
      const tokenRes = await call(s, 'POST', `/v1/users/${userId}/tokens`, apiKey, { scopes: ['upload'] });
      expect(tokenRes.status, tokenRes.text).toBe(201);
      const token = String(tokenRes.json().token);

      // Several accepted uploads: device-a exports of distinct heart-rate samples, and the device-b fixture.
      const accepted: { slug: string; uploadId: string }[] = [];
      for (let u = 0; u < UPLOADS; u++) {
        const form = deviceAForm(heartRateExport(u, LINES_PER_UPLOAD));
        const uploadId = `crash-a-${u}`;
        const res = await call(s, 'POST', '/v1/ingest/device-a', token, form.body, { 'content-type': form.contentType, 'upload-id': uploadId });
        expect(res.status, res.text).toBe(202);
        accepted.push({ slug: 'device-a', uploadId });
      }
      const b = fixtureB();
      const resB = await call(s, 'POST', '/v1/ingest/device-b', token, b, { 'content-type': 'application/json', 'upload-id': 'crash-b' });
      expect(resB.status, resB.text).toBe(202);
      accepted.push({ slug: 'device-b', uploadId: 'crash-b' });
      mark('uploaded');
      const deviceB = await parsePayload('device-b', b);
      const deviceBSamples = deviceB.records.filter((r) => r.kind === 'quantity').length;

      // Kill between two appends of one job: its ingest stream (`ingest-<user>-<last 32 of the
      // upload stream>`) holds at least one of its events and at least two fewer than all.
      const eventsPath = join(dataDir, 'events.sqlite');
      const watcher = new Database(eventsPath, { readonly: true, fileMustExist: true });
      const partialJob = watcher.prepare<[number], { job: string; ingest: string; events: number }>(`
        SELECT u.stream AS job, i.stream AS ingest, i.revision + 1 AS events
        FROM streams i JOIN streams u ON u.stream LIKE 'upload-%' AND substr(u.stream, -32) = substr(i.stream, -32)
        WHERE i.stream LIKE 'ingest-%' AND i.revision + 1 <= ?
          AND EXISTS (SELECT 1 FROM events a WHERE a.stream = u.stream AND a.type = 'upload.accepted' AND a.data LIKE '%"provider":"device-a"%')
          AND NOT EXISTS (SELECT 1 FROM events f WHERE f.stream = u.stream AND f.type = 'etl.job_succeeded')`);
      let killedDuring: { job: string; ingest: string } | null = null;
      const until = Date.now() + 60_000;
      while (!killedDuring) {
        const row = partialJob.get(MIN_EVENTS_PER_JOB - 2);
        if (row) {
          s.child.kill('SIGKILL');
          killedDuring = row;
          break;
        }
        if (Date.now() > until) throw new Error(`no ETL job seen part-way in 60 s (${timeline.join(', ')}): ${s.stderr()}`);
        await sleep(5);
      }
      mark(`killed during ${killedDuring.job}`);
      const exit = await s.exited;
      expect(exit.signal).toBe('SIGKILL');
      // The job really was cut short between two appends: started, some of its events, no outcome.
      const cut = watcher.prepare<[string], { type: string }>('SELECT type FROM events WHERE stream = ? ORDER BY revision').all(killedDuring.job).map((r) => r.type);
      expect(cut).toContain('etl.job_started');
      expect(cut).not.toContain('etl.job_succeeded');
      const storedBeforeKill = watcher.prepare<[string], { id: string; revision: number }>('SELECT id, revision FROM events WHERE stream = ? ORDER BY revision').all(killedDuring.ingest);
      expect(storedBeforeKill.length).toBeGreaterThanOrEqual(1);
      expect(storedBeforeKill.length).toBeLessThan(MIN_EVENTS_PER_JOB);
      mark(`${storedBeforeKill.length} of its events stored`);
      watcher.close();

      // Restart on the same DATA_DIR and let it finish.
      s = await startService(dataDir, { ETL_CONCURRENCY: '2' });
      mark('restarted');
      const expectedSamples = UPLOADS * LINES_PER_UPLOAD;
      const done = Date.now() + 120_000;
      let cov = await coverageOf(s, apiKey, userId);
      // Queue empty, and the read models caught up with every record (coverage counts them).
      while (cov.pending_jobs > 0 || totalRecords(cov) < expectedSamples + deviceB.records.length) {
        if (Date.now() > done) throw new Error(`not caught up 120 s after restart (${timeline.join(', ')}): ${JSON.stringify({ pending: cov.pending_jobs, parked: cov.parked_jobs, records: totalRecords(cov) })} ${s.stderr()}`);
        await sleep(250);
        cov = await coverageOf(s, apiKey, userId);
      }
      mark('caught up');
      // Every accepted upload fully normalised: nothing pending, nothing parked (spec ETL job; Pipeline).
      expect(cov.pending_jobs).toBe(0);
      expect(cov.parked_jobs).toBe(0);
      for (const status of ['parked', 'pending', 'running']) {
        const res = await call(s, 'GET', `/v1/pipeline/etl-jobs?status=${status}`, apiKey);
        expect(res.status, res.text).toBe(200);
        expect((res.json() as { data: unknown[] }).data, `${status} jobs`).toEqual([]);
      }
      // One record per uuid sent: the device-a samples and every record of the device-b fixture, none twice.
      expect(metricTotal(cov, 'device-a', 'heart_rate')).toBe(expectedSamples);
      const deviceBTypes = new Set(deviceB.records.flatMap((r) => (r.kind === 'quantity' ? [r.type] : [])));
      const deviceBSampleTotal = [...deviceBTypes].reduce((n, type) => n + metricTotal(cov, 'device-b', type), 0);
      expect(deviceBSampleTotal).toBe(deviceBSamples);
      expect(totalRecords(cov)).toBe(expectedSamples + deviceB.records.length);

      // Stop cleanly, then look at the files themselves.
      s.child.kill('SIGTERM');
      const stopped = await s.exited;
      expect(stopped.code, s.stderr()).toBe(0);

      mark('stopped');
      const events = new Database(eventsPath, { readonly: true, fileMustExist: true });
      // Event data is read through the store, which inflates the compressed record batches.
      const store = new SqliteEventStore({ path: eventsPath });
      const readModels = new SqliteReadStore({ path: join(dataDir, 'readmodels.sqlite') });
      try {
        // No event id twice in the log.
        expect(events.prepare('SELECT COUNT(*) - COUNT(DISTINCT id) AS d FROM events').get()).toEqual({ d: 0 });
        // Record batches are sealed with the user's data keys (docs/erasure.md): opened as the projector opens them.
        const opener = new EventOpener(dataKeysOf(loadConfig({ DATA_DIR: dataDir } as NodeJS.ProcessEnv), store));
        const sealed = (await readEverything(store)).filter((e) => e.type.endsWith('.ingested') || e.type === 'records.rejected');
        expect(sealed.every((e) => 'sealed' in e.data)).toBe(true);
        const ingested = await Promise.all(sealed.map((e) => opener.open(e)));
        // Each (job, kind, batch) of every ingested kind appended once.
        const batches = new Map<string, number>();
        for (const e of ingested) {
          const d = e.data as { job: string; batch: number };
          const key = `${d.job} ${e.type} ${d.batch}`;
          batches.set(key, (batches.get(key) ?? 0) + 1);
        }
        expect([...batches].filter(([, n]) => n > 1)).toEqual([]);
        // Every record is in the log exactly once: as many records as distinct external ids, per provider.
        const logged = new Map<string, { records: number; ids: Set<string> }>();
        for (const e of ingested) {
          if (e.type !== 'samples.ingested') continue;
          const d = e.data as { provider: string; records: { external_id: string }[] };
          let p = logged.get(d.provider);
          if (!p) logged.set(d.provider, (p = { records: 0, ids: new Set() }));
          p.records += d.records.length;
          for (const r of d.records) p.ids.add(r.external_id);
        }
        expect([...logged].map(([provider, p]) => ({ provider, records: p.records, distinct_ids: p.ids.size })).sort((x, y) => x.provider.localeCompare(y.provider))).toEqual([
          { provider: 'device-a', records: expectedSamples, distinct_ids: expectedSamples },
          { provider: 'device-b', records: deviceBSamples, distinct_ids: deviceBSamples },
        ]);
        // The job cut short kept the events it had stored, at their revisions, and went on after them.
        const resumed = events.prepare<[string], { id: string; revision: number }>('SELECT id, revision FROM events WHERE stream = ? ORDER BY revision').all(killedDuring.ingest);
        expect(resumed.length).toBeGreaterThanOrEqual(MIN_EVENTS_PER_JOB);
        expect(resumed.map((r) => r.revision)).toEqual(resumed.map((_, i) => i));
        expect(resumed.slice(0, storedBeforeKill.length)).toEqual(storedBeforeKill);
        const resumedRecords = ingested.filter((e) => e.streamName === killedDuring.ingest).reduce((n, e) => n + (e.data as { records: unknown[] }).records.length, 0);
        expect(resumedRecords).toBe(LINES_PER_UPLOAD);
        // Every accepted upload: accepted once, succeeded once, one data.written, never parked.
        const jobs = events
          .prepare(
            `SELECT stream,
                    SUM(type = 'upload.accepted') AS accepted, SUM(type = 'etl.job_succeeded') AS succeeded,
                    SUM(type = 'data.written') AS written, SUM(type = 'etl.job_parked') AS parked, SUM(type = 'etl.job_started') AS started
             FROM events WHERE stream LIKE 'upload-%' GROUP BY stream`,
          )
          .all() as { stream: string; accepted: number; succeeded: number; written: number; parked: number; started: number }[];
        expect(jobs).toHaveLength(accepted.length);
        for (const j of jobs) expect(j, j.stream).toMatchObject({ accepted: 1, succeeded: 1, written: 1, parked: 0 });
        // The job cut short was started again after the restart.
        expect(jobs.find((j) => j.stream === killedDuring.job)!.started).toBeGreaterThanOrEqual(2);
        // The read model holds one sample per uuid (packed in blocks, docs/sample-blocks.md).
        const stored = new Map<string, Set<string>>();
        const samples = (await readModels.find<SampleBlockDoc>(SAMPLE_BLOCKS, { filter: { user_id: userId } })).flatMap((b) => decodeBlock(b.data));
        for (const d of samples) {
          let ids = stored.get(d.provider);
          if (!ids) stored.set(d.provider, (ids = new Set()));
          ids.add(d.external_id);
        }
        expect(samples).toHaveLength(expectedSamples + deviceBSamples);
        expect(stored.get('device-a')?.size).toBe(expectedSamples);
        expect(stored.get('device-b')?.size).toBe(deviceBSamples);
      } finally {
        events.close();
        await store.close();
        await readModels.close();
      }
    },
    240_000,
  );
});
