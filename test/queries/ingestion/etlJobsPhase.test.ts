import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { etlJobsProjection, jobPhase, OPEN_JOBS, type EtlJobDoc } from '../../../projections/ingestion/etlJobsProjection.js';
import { listEtlJobs } from '../../../queries/ingestion/listEtlJobs.js';
import type { RecordedEvent } from '../../../src/eventstore/eventStore.js';
import type { Change } from '../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../../support/tmp.js';

/**
 * The `etl_jobs` read model's phase (issue 37; docs/decisions.md "The ETL jobs' phase"): the
 * indexes led by the tenant and by the user hold the status's class, so a job's start rewrites
 * neither, and every read of open, parked or done jobs still finds what the status says.
 */

const spec = etlJobsProjection.collections[0]!;
const T = 'tenant-1';
const U = '11111111-1111-4111-8111-111111111111';
let position = 0;

function event(type: string, stream: string, data: Record<string, unknown>): RecordedEvent {
  return { id: `e${++position}`, type, data: { user_id: U, tenant_id: T, ...data }, metadata: {}, streamName: stream, streamRevision: 0, globalPosition: position, createdAt: new Date() } as unknown as RecordedEvent;
}
const at = '2026-12-07T22:00:00.000Z';
const accepted = (stream: string) => event('upload.accepted', stream, { provider: 'device-a', upload_id: stream, bytes: 10, tier: 'upload', accepted_at: at });
const started = (stream: string, attempt = 1) => event('etl.job_started', stream, { attempt, worker: 'w', started_at: at, lease_until: at });
const failed = (stream: string, attempt: number) => event('etl.job_failed', stream, { attempt, error: 'boom', next_attempt_at: at });
const parked = (stream: string, attempt: number) => event('etl.job_parked', stream, { attempt, error: 'boom', parked_at: at });
const retried = (stream: string) => event('etl.job_retried', stream, { by: 'operator', at });
const succeeded = (stream: string) => event('etl.job_succeeded', stream, { finished_at: at, records: { heart_rate: 1 }, rejected: 0 });

let store: SqliteReadStore;
let path: string;
beforeEach(async () => {
  path = join(tempDir(), 'read.sqlite');
  store = new SqliteReadStore({ path });
  await store.ensureCollections(etlJobsProjection.collections);
});
afterEach(async () => {
  await store.close();
});

const apply = async (...events: RecordedEvent[]) => {
  for (const e of events) await store.applyChanges(etlJobsProjection.evolve(e as never, 0) as Change[]);
};

describe('etl_jobs: the phase in place of the status in the indexes by tenant and by user', () => {
  it("a job's start sets no field of an index led by the tenant or the user (it changes the status alone there)", () => {
    const changes = etlJobsProjection.evolve(started('upload-a') as never, 0);
    expect(changes).toHaveLength(1);
    const set = Object.keys((changes[0] as { set: Record<string, unknown> }).set);
    const byOwner = (spec.indexes ?? []).filter((ix) => ix.fields[0]![0] === 'tenant_id' || ix.fields[0]![0] === 'user_id');
    expect(byOwner).toHaveLength(2);
    for (const ix of byOwner) for (const [f] of ix.fields) expect(set).not.toContain(f);
  });

  it("a job's phase is its status's class at every step of its life (start, failure, parking, replay, success)", async () => {
    const s = 'upload-a';
    const steps = [accepted(s), started(s), failed(s, 1), started(s, 2), parked(s, 2), retried(s), started(s, 1), succeeded(s)];
    const seen: string[] = [];
    for (const e of steps) {
      await apply(e);
      const doc = (await store.get<EtlJobDoc>('etl_jobs', s))!;
      expect(doc.phase).toBe(jobPhase(doc.status));
      seen.push(`${doc.status}/${doc.phase}`);
    }
    expect(seen).toEqual(['pending/open', 'running/open', 'pending/open', 'running/open', 'parked/parked', 'pending/open', 'running/open', 'done/done']);
  });

  it('the lists of pending, running and parked jobs, and the counts of open ones, find what the status says', async () => {
    await apply(accepted('upload-p'), accepted('upload-r'), started('upload-r'), accepted('upload-k'), started('upload-k'), parked('upload-k', 1), accepted('upload-d'), started('upload-d'), succeeded('upload-d'));
    const ids = async (status: 'pending' | 'running' | 'parked') => (await listEtlJobs(store, { tenantId: T, status }, { limit: 10 })).items.map((d) => d._id);
    expect(await ids('pending')).toEqual(['upload-p']);
    expect(await ids('running')).toEqual(['upload-r']);
    expect(await ids('parked')).toEqual(['upload-k']);
    expect(await store.count('etl_jobs', { tenant_id: T, ...OPEN_JOBS })).toBe(2);
    expect(await store.count('etl_jobs', { user_id: U, ...OPEN_JOBS })).toBe(2);
    expect(await store.count('etl_jobs', { status: { $in: ['pending', 'running'] } })).toBe(2);
  });

  it("the open jobs of a user and of a tenant are read by their phase's index", async () => {
    await store.close();
    const db = new Database(path, { readonly: true });
    const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join(' | ');
    const user = plan(`SELECT _id FROM rm_etl_jobs WHERE "f_user_id" = 'u' AND "f_phase" = 'open' LIMIT 10`);
    const tenant = plan(`SELECT COUNT(*) FROM rm_etl_jobs WHERE "f_tenant_id" = 't' AND "f_phase" = 'open'`);
    db.close();
    store = new SqliteReadStore({ path });
    expect(user).toMatch(/USING (COVERING )?INDEX rm_etl_jobs_ix2 \(f_user_id=\? AND f_phase=\?\)/);
    expect(tenant).toMatch(/USING (COVERING )?INDEX rm_etl_jobs_ix1 \(f_tenant_id=\? AND f_phase=\?\)/);
  });
});
