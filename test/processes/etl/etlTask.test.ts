import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ingestStream } from '../../../commands/ingestion/ingestedEvents.js';
import { userStream, type UserEvent } from '../../../commands/users/user.js';
import { dataKeysOf } from '../../../src/app/dataKeysOf.js';
import { loadConfig } from '../../../src/config.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { runEtlTask } from '../../../src/processes/etl/etlTask.js';
import type { RawStore } from '../../../src/rawstore/rawStore.js';
import { healthKitParser } from '../../../src/sources/files/device-a/healthKitParser.js';
import { tempDir } from '../../support/tmp.js';
import { DEVICE_JOB, deviceUpload } from './etlRunFakes.js';

/**
 * A run stops when its user is being deleted (contracts §19/§20). The ETL thread reads the user's
 * status from the last events of the user's stream (issue 37); these runs check it answers as
 * the whole stream folded does, also where the status event is further back than that look.
 */

const config = loadConfig({ DATA_DIR: tempDir('wellstream-etl-task-'), LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv);
const JOB = DEVICE_JOB;
const upload = deviceUpload;
const payload = gzipSync(
  JSON.stringify({
    kind: 'quantity',
    uuid: 'C4A5E0D1-7B2F-4E3A-9C1D-000000000001',
    type: 'HKQuantityTypeIdentifierHeartRate',
    value: 61,
    unit: 'count/min',
    start_date: '2026-01-01T00:00:00.000Z',
    end_date: '2026-01-01T00:00:00.000Z',
  }),
);
const rawStore = { kind: 'file', get: async () => payload } as unknown as RawStore;

const registered: UserEvent = { type: 'user.registered', data: { user_id: 'u1', tenant_id: 't1', external_ref: null, created_at: '2026-01-01T00:00:00.000Z' } };
const deletionRequested: UserEvent = {
  type: 'user.deletion_requested',
  data: { user_id: 'u1', tenant_id: 't1', job_id: 'd1', external_ref: null, requested_at: '2026-03-01T00:00:00.000Z', requested_by: 'test' },
};
/** Tokens minted on the user's stream before tokens had a stream of their own (issue 26). */
const legacyTokens = (n: number): UserEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    type: 'user.token_minted',
    data: { user_id: 'u1', tenant_id: 't1', token_id: `tok-${i}`, token_hash: 'ef'.repeat(32), scopes: ['upload'], expires_at: '2027-01-01T00:00:00.000Z', issued_by: 'old-key', created_at: '2026-01-01T00:00:00.000Z' },
  }));

const open: SqliteEventStore[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

async function runFor(userEvents: UserEvent[]) {
  const store = new SqliteEventStore({ path: ':memory:' });
  open.push(store);
  if (userEvents.length) await store.appendToStream(userStream('u1'), userEvents);
  const outcome = await runEtlTask({ eventStore: store, rawStore, parsers: { 'device-a': healthKitParser }, dataKeys: dataKeysOf(config, store) }, { jobStream: JOB, upload });
  return { outcome, stored: await store.readStream(ingestStream('u1', JOB)) };
}

describe("runEtlTask: a run stops when its user is being deleted (contracts §19/§20), the status read from the user stream's end", () => {
  it('runs for an active user', async () => {
    const { outcome, stored } = await runFor([registered]);
    expect(outcome).toMatchObject({ kind: 'succeeded', records: { quantity: 1 } });
    expect(stored).toHaveLength(1);
  });

  it('runs for an active user whose stream holds more tokens after the registration than the look at its end reads', async () => {
    const { outcome, stored } = await runFor([registered, ...legacyTokens(40)]);
    expect(outcome).toMatchObject({ kind: 'succeeded', records: { quantity: 1 } });
    expect(stored).toHaveLength(1);
  });

  it('appends nothing for a user whose deletion was requested, found at the stream end', async () => {
    const { outcome, stored } = await runFor([registered, ...legacyTokens(3), deletionRequested]);
    expect(outcome).toEqual({ kind: 'discarded', reason: 'user deleted' });
    expect(stored).toEqual([]);
  });

  it('appends nothing for a user whose deletion request lies further back than the look at the stream end', async () => {
    const { outcome, stored } = await runFor([registered, deletionRequested, ...legacyTokens(40)]);
    expect(outcome).toEqual({ kind: 'discarded', reason: 'user deleted' });
    expect(stored).toEqual([]);
  });

  it('appends nothing for a user that was never registered', async () => {
    const { outcome, stored } = await runFor([]);
    expect(outcome).toEqual({ kind: 'discarded', reason: 'user deleted' });
    expect(stored).toEqual([]);
  });
});
