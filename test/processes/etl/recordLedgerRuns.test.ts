import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ingestStream } from '../../../commands/ingestion/ingestedEvents.js';
import { eventSealer } from '../../../src/crypto/recordSealing.js';
import type { EventStore } from '../../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { runEtlJob, type EtlKeys } from '../../../src/processes/etl/runEtlJob.js';
import type { RecordLedger } from '../../../src/recordledger/recordLedger.js';
import { appleHealthImport } from '../../../src/sources/files/apple-health/appleHealthDecoder.js';
import { exportXml, zipOf } from '../../sources/files/apple-health/exportFixtures.js';
import { appleUpload, crashingAfter, ledgerBackends, rawStoreOf } from './etlRunFakes.js';

/**
 * contracts §13 `unchanged` through the ETL run, on each ledger backend (issue 21: the production
 * MongoDB ledger as well as the embedded one): a second upload of the same export writes nothing
 * and counts every record unchanged, also when it crashed part-way and resumed; a run resumed
 * after a crash decides as the first did; another data key (a later generation, after an
 * erasure) matches nothing.
 */
const upload = appleUpload;
const job = (user: string, n: number) => `upload-${user}-${String(n).padStart(64, '0')}`;

async function exportZip(n: number): Promise<Buffer> {
  const rows = Array.from({ length: n }, (_, i) => {
    const at = new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000');
    return `<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="${at}" startDate="${at}" endDate="${at}" value="${50 + (i % 50)}"/>`;
  });
  return zipOf({ 'apple_health_export/export.xml': exportXml(rows.join('\n')) });
}
const keysOf = (key: Buffer): EtlKeys => ({ sealer: eventSealer('u/apple-health/0', key), dataKey: { key, keyId: 'u/apple-health/0' } });

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c();
});

describe.each(ledgerBackends)('unchanged through the ETL run, ledger on %s (contracts §13; issue 21)', (_name, openLedger) => {
  const setup = () => {
    const store = new SqliteEventStore({ path: ':memory:' });
    const ledger = openLedger();
    closing.push(async () => {
      await ledger.close();
      await store.close();
    });
    return { store, ledger };
  };
  const run = (store: EventStore, ledger: RecordLedger, payload: Buffer, user: string, n: number, key: Buffer) =>
    runEtlJob(store, rawStoreOf(payload), appleHealthImport, job(user, n), upload(user), undefined, keysOf(key), { ledger, checkpointItems: 500 });

  it('a second upload of the same export writes nothing: every record counts as unchanged', async () => {
    const { store, ledger } = setup();
    const payload = await exportZip(1200);
    const key = randomBytes(32);
    expect(await run(store, ledger, payload, 'u1', 1, key)).toMatchObject({ kind: 'succeeded', records: { quantity: 1200 }, unchanged: 0 });
    expect(await run(store, ledger, payload, 'u1', 2, key)).toMatchObject({ kind: 'succeeded', records: {}, unchanged: 1200 });
    const written = (await store.readStream(ingestStream('u1', job('u1', 2)))).filter((e) => e.type === 'samples.ingested');
    expect(written).toEqual([]);
  });

  it('a newer export holding an older one writes only what is new', async () => {
    const { store, ledger } = setup();
    const key = randomBytes(32);
    await run(store, ledger, await exportZip(700), 'u1', 1, key);
    expect(await run(store, ledger, await exportZip(1000), 'u1', 2, key)).toMatchObject({ records: { quantity: 300 }, unchanged: 700 });
  });

  it.each([1, 3])('a run killed after %i appends and resumed decides as the first did: its own records are written once, not counted unchanged', async (appends) => {
    const { store, ledger } = setup();
    const payload = await exportZip(1200);
    const key = randomBytes(32);
    const stream = ingestStream('u1', job('u1', 1));
    await expect(runEtlJob(crashingAfter(store, stream, appends), rawStoreOf(payload), appleHealthImport, job('u1', 1), upload('u1'), undefined, keysOf(key), { ledger, checkpointItems: 500 })).rejects.toThrow('killed');
    expect(await run(store, ledger, payload, 'u1', 1, key)).toMatchObject({ records: { quantity: 1200 }, unchanged: 0 });
    expect(await run(store, ledger, payload, 'u1', 2, key)).toMatchObject({ records: {}, unchanged: 1200 });
  });

  it('issue 37: jobs run at once (their notes and commits sharing transactions), one killed part-way: each writes its records once, the killed one resumed decides as the first did, and later uploads count every record unchanged', async () => {
    const { store, ledger } = setup();
    const payload = await exportZip(1200);
    const key = randomBytes(32);
    const users = ['u1', 'u2', 'u3', 'u4'];
    const killed = ingestStream('u1', job('u1', 1));
    const first = await Promise.allSettled(
      users.map((user) =>
        user === 'u1'
          ? runEtlJob(crashingAfter(store, killed, 2), rawStoreOf(payload), appleHealthImport, job(user, 1), upload(user), undefined, keysOf(key), { ledger, checkpointItems: 500 })
          : run(store, ledger, payload, user, 1, key),
      ),
    );
    expect(first[0]).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('killed') } });
    for (const other of first.slice(1)) expect(other).toMatchObject({ status: 'fulfilled', value: { records: { quantity: 1200 }, unchanged: 0 } });
    expect(await run(store, ledger, payload, 'u1', 1, key)).toMatchObject({ records: { quantity: 1200 }, unchanged: 0 });
    for (const user of users) {
      const inLog = (await store.readStream(ingestStream(user, job(user, 1)))).filter((e) => e.type === 'samples.ingested');
      expect(inLog.reduce((n, e) => n + (e.data as { sealed: { count: number } }).sealed.count, 0)).toBe(1200);
    }
    const again = await Promise.all(users.map((user) => run(store, ledger, payload, user, 2, key)));
    for (const outcome of again) expect(outcome).toMatchObject({ records: {}, unchanged: 1200 });
  });

  // Checkpoints far apart: records are checked against the ledger (500 at a time) well before their batch is appended.
  it.each([0, 1])('contracts §19 (issue 35): a job that stopped for good after %i appends (it parks) makes a later upload of the same records skip only what it appended; the rest is written', async (appends) => {
    const { store, ledger } = setup();
    const payload = await exportZip(1200);
    const key = randomBytes(32);
    const parked = ingestStream('u1', job('u1', 1));
    await expect(runEtlJob(crashingAfter(store, parked, appends), rawStoreOf(payload), appleHealthImport, job('u1', 1), upload('u1'), undefined, keysOf(key), { ledger })).rejects.toThrow('killed');
    const inLog = (await store.readStream(parked)).filter((e) => e.type === 'samples.ingested').reduce((n, e) => n + (e.data as { sealed: { count: number } }).sealed.count, 0);
    expect(inLog).toBeLessThan(1200);
    // Never resumed: a later upload of the same export writes every record the parked job did not append.
    expect(await run(store, ledger, payload, 'u1', 2, key)).toMatchObject({ kind: 'succeeded', records: { quantity: 1200 - inLog }, unchanged: inLog });
    expect(await run(store, ledger, payload, 'u1', 3, key)).toMatchObject({ records: {}, unchanged: 1200 });
  });

  it('under another data key (the next generation after an erasure) or for another user, nothing matches', async () => {
    const { store, ledger } = setup();
    const payload = await exportZip(300);
    await run(store, ledger, payload, 'u1', 1, randomBytes(32));
    expect(await run(store, ledger, payload, 'u1', 2, randomBytes(32))).toMatchObject({ records: { quantity: 300 }, unchanged: 0 });
    const shared = randomBytes(32);
    await run(store, ledger, payload, 'u2', 1, shared);
    expect(await run(store, ledger, payload, 'u3', 1, shared)).toMatchObject({ records: { quantity: 300 }, unchanged: 0 });
  });
});
